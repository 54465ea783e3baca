from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.config import Settings
from kernelwright.errors import RunStoreError
from kernelwright.graphs.runner import resume_run, run_state, start_run
from kernelwright.graphs.store import RunStore

from .fakes import FakeEvaluator, fake_context_factory

TASK = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "l1_gelu.py"


@pytest.fixture
def settings(tmp_path):
    return Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", budget=7)


def test_run_spends_the_budget_and_reports_the_best(settings):
    evaluator = FakeEvaluator()
    report = start_run(
        TASK, settings, run_id="r1", context_factory=fake_context_factory(evaluator)
    )
    assert report.evaluations == 7 == len(evaluator.calls) == len(set(evaluator.calls))
    assert report.correct and report.best_speedup == pytest.approx(3.5)  # block 5
    assert Path(report.kernel_path).read_text() == "# block 5"
    state = run_state("r1", settings)
    assert state["decisions"][-1].action.value == "stop"
    assert "budget spent" in state["decisions"][-1].reason
    assert RunStore(settings.data_dir).meta("r1")["status"] == "done"


def test_crash_then_resume_loses_nothing_and_repeats_nothing(settings):
    crashing = FakeEvaluator(crash_after=3)
    with pytest.raises(KeyboardInterrupt):
        start_run(TASK, settings, run_id="r2", context_factory=fake_context_factory(crashing))
    store = RunStore(settings.data_dir)
    assert len(store.evaluations("r2")) == 3
    resumed = FakeEvaluator()
    report = resume_run("r2", settings, context_factory=fake_context_factory(resumed))
    assert report.evaluations == 7
    assert set(crashing.calls).isdisjoint(resumed.calls)
    logged = store.evaluations("r2")
    assert len(logged) == len(set(logged)) == 7


def test_resuming_a_finished_run_evaluates_nothing(settings):
    start_run(TASK, settings, run_id="r3", context_factory=fake_context_factory(FakeEvaluator()))
    again = FakeEvaluator()
    report = resume_run("r3", settings, context_factory=fake_context_factory(again))
    assert again.calls == [] and report.evaluations == 7


def test_unknown_run_names_the_fix(settings):
    with pytest.raises(RunStoreError, match="kernelwright runs"):
        resume_run("nope", settings, context_factory=fake_context_factory(FakeEvaluator()))
