"""Runs on a PostgreSQL store: two optimize processes share it, and a run killed with
kill -9 resumes from it; nothing lost, nothing counted twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "examples" / "tasks" / "l1_gelu.py"
DEADLINE_S = 1500
QUICK_ENV = {"KERNELWRIGHT_SEEDS": "1", "KERNELWRIGHT_MIN_TIME_S": "0.02",
             "KERNELWRIGHT_MAX_REPEATS": "3", "KERNELWRIGHT_WARMUP_CALLS": "0"}

pytestmark = [pytest.mark.requires_sycl, pytest.mark.slow]


def _cli(*args: str) -> subprocess.Popen:
    env = {**os.environ, **QUICK_ENV}
    return subprocess.Popen([sys.executable, "-m", "kernelwright.cli", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _check_run(url: str, tmp_path: Path, run_id: str, budget: int, out: str) -> None:
    from kernelwright.graphs.store import RunStore, open_checkpointer
    from kernelwright.graphs.store_pg import PgRunStore

    report = json.loads(out.strip().splitlines()[-1])
    runs = PgRunStore(url, mirror=tmp_path / "check")
    logged = runs.evaluations(run_id)
    assert len(logged) == len(set(logged)), f"an evaluation ran twice: {logged}"
    assert report["evaluations"] == budget == len(logged)
    assert all(runs.load_result(run_id, cid) is not None for cid in logged)
    assert runs.meta(run_id)["status"] == "done" and report["correct"]
    saver = open_checkpointer(url)
    assert saver.get_tuple({"configurable": {"thread_id": run_id}}) is not None
    assert isinstance(RunStore(url), PgRunStore)


def test_two_optimize_processes_share_one_store(pg_url, tmp_path):
    budget = 2
    procs = {rid: _cli("optimize", str(TASK), "--budget", str(budget), "--run-id",
                       rid, "--store", pg_url, "--json") for rid in ("one", "two")}
    outs = {rid: p.communicate(timeout=DEADLINE_S) for rid, p in procs.items()}
    for rid, (out, err) in outs.items():
        assert procs[rid].returncode == 0, err[-3000:]
        _check_run(pg_url, tmp_path, rid, budget, out)


def test_sigkill_then_resume_from_postgres(pg_url, tmp_path):
    from kernelwright.graphs.store_pg import PgRunStore

    budget, run_id = 3, "killed"
    watch = PgRunStore(pg_url, mirror=tmp_path / "watch")
    proc = _cli("optimize", str(TASK), "--budget", str(budget), "--run-id", run_id,
                "--store", pg_url, "--json")
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline and proc.poll() is None:
        if run_id in watch.run_ids() and len(watch.evaluations(run_id)) >= 1:
            break
        time.sleep(0.1)
    assert proc.poll() is None, f"the run ended before the kill: {proc.communicate()[1][-2000:]}"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert watch.meta(run_id)["status"] == "interrupted"
    before = watch.evaluations(run_id)
    assert 1 <= len(before) < budget
    proc = _cli("resume", run_id, "--store", pg_url, "--json")
    out, err = proc.communicate(timeout=DEADLINE_S)
    assert proc.returncode == 0, err[-3000:]
    _check_run(pg_url, tmp_path, run_id, budget, out)
    assert watch.evaluations(run_id)[: len(before)] == before
