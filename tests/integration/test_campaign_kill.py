"""kill -9 a campaign twice at observed progress, resume each time with `kernelwright resume`:
every evaluation is counted once and none is lost (cpp backend, two example tasks)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Tasks whose lowered C++ program has at least BUDGET_PER_TASK schedule points (a C++ row group
# such as softmax declares no tunables yet, so its run stops after its one default candidate).
TASKS = ("l1_gelu.py", "l1_matmul.py")
BUDGET_PER_TASK = 3
KILL_AT = (1, 4)  # kill once this many evaluations are logged (over all the campaign's runs)


def _cli(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "kernelwright.cli", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip


def _logged(store: Path, campaign: str) -> list[str]:
    out = []
    for log in sorted(store.glob(f"runs/{campaign}--*/evaluations.log")):
        out += [f"{log.parent.name}:{line.split()[-1]}" for line in log.read_text().splitlines()]
    return out


def _wait_for(proc: subprocess.Popen, store: Path, campaign: str, count: int) -> bool:
    """True once ``count`` evaluations are logged; False if the process ended first."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if len(_logged(store, campaign)) >= count:
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.2)
    return False


@pytest.mark.slow
def test_campaign_killed_twice_counts_every_evaluation_once(tmp_path):
    tasks, store, campaign = tmp_path / "tasks", tmp_path / "store", "camp-kill"
    tasks.mkdir()
    for name in TASKS:
        shutil.copy(ROOT / "examples" / "tasks" / name, tasks / name)
    start = (
        "campaign",
        str(tasks),
        "--hours",
        "1",
        "--budget-per-task",
        str(BUDGET_PER_TASK),
        "--backend",
        "cpp",
        "--campaign-id",
        campaign,
        "--store",
        str(store),
        "--json",
    )
    proc = _cli(*start)
    moments = []
    for count in KILL_AT:
        assert _wait_for(proc, store, campaign, count), proc.communicate()[1][-3000:]
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        moments.append(len(_logged(store, campaign)))
        proc = _cli("resume", campaign, "--store", str(store), "--json")
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, (
        f"exited {proc.returncode} after kills at {moments}: {err[-3000:]}"
    )
    summary = json.loads(out.strip().splitlines()[-1])
    logged = _logged(store, campaign)
    assert len(logged) == len(set(logged)), f"an evaluation ran twice: {logged}"
    # each task spends its budget, or fewer when its space has fewer distinct sources (a
    # candidate is its source: l1_gelu's C++ program has two at this size)
    expected = BUDGET_PER_TASK * len(TASKS)
    assert len(TASKS) < summary["evaluations"] == len(logged) <= expected
    assert sum(r["evaluations"] for r in summary["rows"]) == len(logged)
    for run_id in summary["run_ids"]:
        results = {p.stem for p in (store / "runs" / run_id / "results").glob("*.json")}
        assert {f"{run_id}:{r}" for r in results} == {e for e in logged if e.startswith(run_id)}
    assert summary["kernelbench"]["tasks"] == len(TASKS)
    assert Path(summary["report_md"]).read_text().count("KernelBench fast_") >= 2
    assert summary["report_html"] is None or Path(summary["report_html"]).stat().st_size > 0
    meta = json.loads((store / "runs" / campaign / "meta.json").read_text())
    assert meta["status"] == "done" and meta["kind"] == "campaign"
