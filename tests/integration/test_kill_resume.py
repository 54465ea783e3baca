"""kill -9 the optimiser at moments set by its observed progress, resume each time: nothing
lost, nothing repeated."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernelwright.graphs.store import RunStore

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "examples" / "tasks" / "l1_gelu.py"
BUDGET = 12
# Kill when the run has made this much observed progress (evaluations logged; 0 = the run
# exists), plus a random pause of up to MAX_PAUSE_S, so the kills land in planning, between
# evaluations and inside them on any machine, and always before the run can finish.
KILL_AT = (0, 1, 3, 6, 9)
MAX_PAUSE_S = 0.5
DEADLINE_S = 1200


def _cli(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "kernelwright.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _progress(store: Path, run_id: str) -> int | None:
    """Evaluations logged so far; ``None`` while the run does not exist yet."""
    runs = RunStore(store)
    return len(runs.evaluations(run_id)) if run_id in runs.run_ids() else None


def _wait_for(proc: subprocess.Popen, store: Path, run_id: str, target: int) -> bool:
    """Poll until the run reached ``target`` (True) or the process exited (False)."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        done = _progress(store, run_id)
        if done is not None and done >= target:
            return True
        time.sleep(0.05)
    raise AssertionError(f"no progress to {target} evaluations within {DEADLINE_S} s")


@pytest.mark.requires_sycl
@pytest.mark.slow
def test_sigkill_at_observed_progress_then_resume(tmp_path):
    store, run_id = tmp_path / "store", "kill-resume"
    start = ("optimize", str(TASK), "--budget", str(BUDGET), "--run-id", run_id)
    start += ("--store", str(store), "--json")
    rng = random.Random(20261202)
    proc = _cli(*start)
    moments = []
    for target in KILL_AT:
        if not _wait_for(proc, store, run_id, target):
            break  # exited before this kill: the assertions below report it
        time.sleep(rng.uniform(0, MAX_PAUSE_S))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        moments.append((target, _progress(store, run_id)))
        proc = _cli("resume", run_id, "--store", str(store), "--json")
    out, err = proc.communicate(timeout=DEADLINE_S)
    assert proc.returncode == 0, f"exited {proc.returncode} after kills {moments}: {err[-3000:]}"
    assert len(moments) == len(KILL_AT), f"the run ended early: {moments}; {err[-2000:]}"
    report = json.loads(out.strip().splitlines()[-1])
    runs = RunStore(store)
    logged = runs.evaluations(run_id)
    assert len(logged) == len(set(logged)), f"an evaluation ran twice: {logged}"
    assert report["evaluations"] == BUDGET == len(logged)
    results = [cid for cid in set(logged) if runs.load_result(run_id, cid) is None]
    assert not results, f"finished evaluations missing from the final run: {results}"
    assert report["correct"] and report["best_speedup"] > 0


if __name__ == "__main__":  # a manual run prints the kill moments
    sys.exit(pytest.main([__file__, "-s"]))
