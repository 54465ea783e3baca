"""SIGKILL a tuning loop mid-trial, resume it in a new process: nothing lost, nothing doubled."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import optuna
import pytest
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from optuna.trial import TrialState

from kernelwright.tools.evolve.archive import MapElitesArchive
from kernelwright.tools.tune.base import params_key

WORKER = Path(__file__).with_name("crash_worker.py")
HANG_AT, TARGET = 6, 12


def run_worker(tmp: Path, target: int, hang_at: int) -> subprocess.Popen:
    args = [str(tmp / "tune.journal"), str(tmp / "archive.json"), str(tmp / "log"), str(target)]
    return subprocess.Popen([sys.executable, str(WORKER), *args, str(hang_at)])


def wait_for(path: Path, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, "worker exited before reaching the hang point"
        assert time.monotonic() < deadline, "worker never reached the hang point"
        time.sleep(0.05)


def load_trials(tmp: Path) -> list[optuna.trial.FrozenTrial]:
    storage = JournalStorage(JournalFileBackend(str(tmp / "tune.journal")))
    return optuna.load_study(study_name="tune", storage=storage).get_trials()


@pytest.mark.slow  # three interpreter start-ups (about 2 s each: the harness imports torch)
def test_sigkill_mid_trial_then_resume(tmp_path):
    proc = run_worker(tmp_path, TARGET, HANG_AT)
    wait_for(tmp_path / "log.hang", proc)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL

    before = load_trials(tmp_path)
    done_before = {t.number: t for t in before if t.state.is_finished()}
    assert sorted(done_before) == list(range(HANG_AT))
    assert before[HANG_AT].state == TrialState.RUNNING
    stale_params = before[HANG_AT].params
    archive_after_kill = MapElitesArchive.load(tmp_path / "archive.json")
    ids = {e.candidate_id for isl in archive_after_kill.islands for e in isl.elites()}
    assert ids <= {params_key(t.params) for t in done_before.values()} and ids

    resumed = run_worker(tmp_path, TARGET, hang_at=-1)
    assert resumed.wait(timeout=120) == 0

    trials = load_trials(tmp_path)
    assert not [t for t in trials if t.state in (TrialState.RUNNING, TrialState.WAITING)]
    assert trials[HANG_AT].state == TrialState.FAIL
    requeued = [t for t in trials if t.user_attrs.get("requeued_from") == HANG_AT]
    assert len(requeued) == 1 and requeued[0].params == stale_params
    assert requeued[0].state == TrialState.COMPLETE

    evaluated = [
        t for t in trials if "outcome" in t.user_attrs and "duplicate_of" not in t.user_attrs
    ]
    assert len(evaluated) == TARGET
    keys = [params_key(t.params) for t in evaluated]
    assert len(set(keys)) == TARGET  # no parameter set evaluated twice
    for number, t in done_before.items():  # nothing finished before the crash was lost
        assert trials[number].state == t.state and trials[number].value == t.value
    log = (tmp_path / "log").read_text()
    assert f"recovered=[{HANG_AT}]" in log

    # the archive file was never torn and now holds the best of every evaluated cell
    archive = MapElitesArchive.load(tmp_path / "archive.json")
    assert archive.generation == TARGET
    restored = MapElitesArchive.from_json(archive.to_json())
    assert restored.cells() == archive.cells()
    assert json.loads((tmp_path / "archive.json").read_text())["generation"] == TARGET

    # a further resume finds nothing stale and re-enqueues nothing
    again = run_worker(tmp_path, TARGET, hang_at=-1)
    assert again.wait(timeout=120) == 0
    assert len(load_trials(tmp_path)) == len(trials)
    assert (tmp_path / "log").read_text().endswith("resumed recovered=[]\n")
