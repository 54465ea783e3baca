"""kill -9 the optimiser at random moments, resume each time: nothing lost, nothing repeated."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "examples" / "tasks" / "l1_gelu.py"
BUDGET = 12  # enough work that all five kills land before the run can finish
KILLS = 5


def _cli(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "kernelwright.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.requires_sycl
@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume(tmp_path):
    store, run_id = tmp_path / "store", "kill-resume"
    start = ("optimize", str(TASK), "--budget", str(BUDGET), "--run-id", run_id)
    start += ("--store", str(store), "--json")
    rng = random.Random(20261202)
    proc = _cli(*start)
    kills, moments = 0, []
    while kills < KILLS:
        delay = rng.uniform(2.0, 9.0)
        try:
            proc.wait(timeout=delay)
            break  # finished before all kills: the assertion below reports it
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
            moments.append((round(delay, 1), len(_logged(store, run_id))))
            created = (store / "runs" / run_id / "meta.json").exists()
            # Killed before the run existed: the user simply starts it again.
            again = ("resume", run_id, "--store", str(store), "--json") if created else start
            proc = _cli(*again)
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, f"exited {proc.returncode} after {kills} kills: {err[-3000:]}"
    assert kills == KILLS, f"run finished after only {kills} kills ({moments}); raise the budget"
    report = json.loads(out.strip().splitlines()[-1])
    logged = _logged(store, run_id)
    assert len(logged) == len(set(logged)), f"an evaluation ran twice: {logged}"
    assert report["evaluations"] == BUDGET == len(logged)
    results = {p.stem for p in (store / "runs" / run_id / "results").glob("*.json")}
    assert results == set(logged), "a finished evaluation is missing from the final run"
    assert report["correct"] and report["best_speedup"] > 0


def _logged(store: Path, run_id: str) -> list[str]:
    log = store / "runs" / run_id / "evaluations.log"
    return [line.split()[-1] for line in log.read_text().splitlines()] if log.exists() else []


if __name__ == "__main__":  # a manual run prints the kill moments
    sys.exit(pytest.main([__file__, "-s"]))
