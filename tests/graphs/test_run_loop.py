"""The run loop's rules: idle rounds end a run, state stays bounded, a run without a correct
kernel says why, and no failure leaves a run marked ``running``."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kernelwright.agents.critic import RuleCritic
from kernelwright.agents.profiler import RooflineProfiler
from kernelwright.config import Settings
from kernelwright.errors import RunStoreError
from kernelwright.graphs.optimize import OptimizeContext, recursion_limit
from kernelwright.graphs.runner import run_state, start_run
from kernelwright.graphs.store import RunStore
from kernelwright.spec import Candidate
from kernelwright.spec.result import Level

from .fakes import PEAKS, FakeCoder, FakeEvaluator, FakePlanner

TASK = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "l1_gelu.py"


@pytest.fixture
def settings(tmp_path):
    return Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", budget=6)


class EmptyCoder:
    """A planner found nothing to write: every proposal is empty."""

    def __init__(self) -> None:
        self.calls = 0

    def propose(self, task, contract, plan, history, n):
        self.calls += 1
        return []


class SameCoder:
    """Proposes the same candidate every time (the optimize loop drops it once evaluated)."""

    def propose(self, task, contract, plan, history, n):
        return [Candidate(source="# block 5", backend="torch", params={"block": 5})]


class GapCoder(FakeCoder):
    """Proposes nothing in its second call only, then carries on."""

    def __init__(self) -> None:
        self.calls = 0

    def propose(self, task, contract, plan, history, n):
        self.calls += 1
        return [] if self.calls == 2 else super().propose(task, contract, plan, history, n)


class WrongEvaluator(FakeEvaluator):
    def __call__(self, task, candidate):
        result = super().__call__(task, candidate)
        return result.model_copy(
            update={"level": Level.VALUE_MISMATCH, "timing": None, "error": "max abs err 0.5"}
        )


class BrokenEvaluator(FakeEvaluator):
    def __call__(self, task, candidate):
        raise RuntimeError("the evaluator blew up")


def factory(coder, evaluator, max_idle_rounds: int = 3):
    @contextlib.contextmanager
    def make(settings, store, run_id):
        yield OptimizeContext(
            settings=settings,
            store=store,
            planner=FakePlanner(),
            coder=coder,
            profiler=RooflineProfiler(PEAKS),
            critic=RuleCritic(patience=2, max_idle_rounds=max_idle_rounds),
            evaluate=evaluator,
        )

    return make


def test_an_empty_proposer_stops_after_the_idle_rounds_and_says_why(settings):
    coder = EmptyCoder()
    report = start_run(
        TASK, settings, run_id="empty", context_factory=factory(coder, FakeEvaluator())
    )
    assert not report.correct and report.evaluations == 0
    assert "no candidate was evaluated" in report.reason
    assert "3 rounds in a row" in report.reason
    assert coder.calls == 3  # one proposal per idle round, no more
    state = run_state("empty", settings)
    assert state["round_sizes"] == [0, 0, 0]  # bounded: no growth past the idle limit
    assert RunStore(settings.data_dir).meta("empty")["status"] == "done"


def test_one_idle_round_does_not_end_a_productive_run(settings):
    coder = GapCoder()
    report = start_run(
        TASK, settings, run_id="gap", context_factory=factory(coder, FakeEvaluator())
    )
    assert report.correct and report.evaluations == settings.budget
    assert 0 in run_state("gap", settings)["round_sizes"]


def test_a_repeated_candidate_counts_as_a_round_without_progress(settings):
    report = start_run(
        TASK, settings, run_id="same", context_factory=factory(SameCoder(), FakeEvaluator())
    )
    assert report.correct and report.evaluations == 1
    state = run_state("same", settings)
    assert state["round_sizes"] == [1, 0, 0, 0]
    assert "nothing new" in state["decisions"][1].reason


def test_a_run_with_no_correct_kernel_reports_the_reason(settings):
    report = start_run(
        TASK, settings, run_id="wrong", context_factory=factory(FakeCoder(), WrongEvaluator())
    )
    assert not report.correct and report.evaluations == settings.budget
    assert report.reason.startswith(f"no correct kernel in {settings.budget} evaluations")
    assert "value_mismatch" in report.reason and "max abs err 0.5" in report.reason
    assert report.model_dump()["reason"] == report.reason  # in the --json output too


def test_a_crash_marks_the_run_failed_not_running(settings):
    with pytest.raises(RuntimeError, match="blew up"):
        start_run(
            TASK, settings, run_id="boom", context_factory=factory(FakeCoder(), BrokenEvaluator())
        )
    meta = RunStore(settings.data_dir).meta("boom")
    assert meta["status"] == "failed"
    assert "RuntimeError: the evaluator blew up" in meta["error"]


def test_a_killed_run_reads_as_interrupted(settings):
    store = RunStore(settings.data_dir)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    store.create_run("killed", {"task": "t", "status": "running"})
    store.update_meta("killed", pid=dead.pid, host=socket.gethostname())
    meta = store.meta("killed")
    assert meta["status"] == "interrupted"
    assert "kernelwright resume killed" in meta["status_note"]
    store.create_run("alive", {"task": "t", "status": "running"})
    store.update_meta("alive", pid=os.getpid(), host=socket.gethostname())
    assert store.meta("alive")["status"] == "running"


def test_step_limit_follows_the_budget():
    assert recursion_limit(4, 3) < recursion_limit(40, 3) < 10_000
    # a run at the limit of idle rounds fits: (budget + 1) * idle rounds of 3 steps, + planner
    assert recursion_limit(4, 3) >= 3 * 5 * 3 + 1


def test_store_that_is_a_file_names_the_fix(tmp_path):
    path = tmp_path / "store.db"
    path.write_text("")
    with pytest.raises(RunStoreError, match="is a directory"):
        RunStore(path)


UNLOWERABLE = """\
import torch
from torch import nn
class Model(nn.Module):
    def forward(self, x):
        return torch.sort(x, dim=-1).values
def get_inputs():
    return [torch.randn(16, 8)]
"""


@pytest.mark.slow
def test_a_reference_that_does_not_lower_ends_the_offline_run_with_the_reason(settings, tmp_path):
    from kernelwright.agents.coder import LoweredCoder
    from kernelwright.agents.planner import LoweringPlanner

    task = tmp_path / "sorted_rows.py"
    task.write_text(UNLOWERABLE)
    evaluator = FakeEvaluator()

    @contextlib.contextmanager
    def make(settings, store, run_id):
        yield OptimizeContext(
            settings=settings, store=store, planner=LoweringPlanner(),
            coder=LoweredCoder(), profiler=RooflineProfiler(PEAKS),
            critic=RuleCritic(max_idle_rounds=3), evaluate=evaluator,
        )

    report = start_run(task, settings, run_id="unlowered", context_factory=make)
    assert not report.correct and report.evaluations == 0 and evaluator.calls == []
    assert "does not lower" in report.reason and "aten.sort" in report.reason
    assert RunStore(settings.data_dir).meta("unlowered")["status"] == "done"
