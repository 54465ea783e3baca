"""The R^3 hierarchy in the graph: archive outside, Optuna inside, crash-safe."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from kernelwright.agents.coder import LoweredCoder
from kernelwright.agents.critic import HierarchyCritic
from kernelwright.agents.lowered import SourceCache
from kernelwright.agents.planner import LoweringPlanner
from kernelwright.agents.profiler import RooflineProfiler
from kernelwright.config import Settings
from kernelwright.graphs.hierarchy import R3Search
from kernelwright.graphs.optimize import OptimizeContext
from kernelwright.graphs.runner import resume_run, run_state, start_run
from kernelwright.graphs.store import RunStore
from kernelwright.spec import Task, derive_contract
from kernelwright.spec.result import EvalResult, Level, Timing
from kernelwright.tools.evolve import MapElitesArchive

from .fakes import PEAKS

TASK = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "l1_gelu.py"
CACHE = SourceCache()  # one lowering of the task for every run of this module


def _space() -> dict[str, list]:
    task = Task.from_path(TASK)
    return CACHE.get(task, derive_contract(task), "sycl").space()


class TableEvaluator:
    """Speedup grows with each parameter's position in its choices (a recorded-table stand-in)."""

    def __init__(self, crash_after: int | None = None) -> None:
        self.calls: list[str] = []
        self.crash_after = crash_after

    def __call__(self, task, candidate):
        if self.crash_after is not None and len(self.calls) >= self.crash_after:
            raise KeyboardInterrupt("simulated kill")
        self.calls.append(candidate.id)
        space = _space()
        rank = sum(space[k].index(v) for k, v in candidate.params.items() if k in space)
        speed = 1.0 + 0.1 * rank
        timing = Timing(reference_median_s=1e-3, reference_iqr_s=1e-6,
                        candidate_median_s=1e-3 / speed, candidate_iqr_s=1e-6, repeats=9,
                        speedup=speed,
                        speedup_low=speed, speedup_high=speed)
        return EvalResult(task_name=task.name, candidate_id=candidate.id, backend="sycl",
                          level=Level.CORRECT, timing=timing)


def factory(evaluator):
    @contextlib.contextmanager
    def make(settings, store, run_id):
        search = R3Search(store, run_id, settings, CACHE)
        yield OptimizeContext(
            settings=settings, store=store, planner=LoweringPlanner(cache=CACHE),
            coder=LoweredCoder(cache=CACHE),
            profiler=RooflineProfiler(PEAKS), critic=HierarchyCritic(inner_share=0.5),
            evaluate=evaluator, search=search.inner, choose_parent=search.parent, batch_size=2,
        )
    return make


@pytest.fixture
def settings(tmp_path):
    return Settings(data_dir=tmp_path / "d", cache_dir=tmp_path / "c", budget=12)


def test_hierarchy_moves_between_levels_and_says_why(settings):
    report = start_run(TASK, settings, run_id="h1", context_factory=factory(TableEvaluator()))
    state = run_state("h1", settings)
    reasons = [d.reason for d in state["decisions"]]
    assert any("inner level" in r or "inner:" in r for r in reasons), reasons
    stages = [p.stage for p in state["profiles"]]
    assert "inner" in stages and "outer" in stages
    assert report.evaluations == 12
    journal = settings.data_dir / "runs" / "h1" / "tune" / "lowered.journal"
    assert journal.exists()
    inner_best = max(p.speedup for p in state["profiles"] if p.stage == "inner")
    first = state["profiles"][0].speedup
    assert inner_best > first  # tuning improved on the lowered program's default schedule
    assert {p.source for p in state["profiles"]} == {"lowered"}
    assert any(p.origin == "tuner:lowered" for p in state["profiles"])


def test_kill_during_tuning_then_resume_loses_and_repeats_nothing(settings):
    killed = TableEvaluator(crash_after=7)  # dies inside the inner level
    with pytest.raises(KeyboardInterrupt):
        start_run(TASK, settings, run_id="h2", context_factory=factory(killed))
    resumed = TableEvaluator()
    report = resume_run("h2", settings, context_factory=factory(resumed))
    assert report.evaluations == 12
    assert set(killed.calls).isdisjoint(resumed.calls)  # no evaluation repeated
    logged = RunStore(settings.data_dir).evaluations("h2")
    assert len(logged) == len(set(logged)) == 12  # none lost
    # The journal's evaluated trials are distinct parameter sets, each told once (a repeated
    # proposal is answered from history and marked duplicate_of, costing no evaluation).
    from kernelwright.tools.tune import OptunaTuner, SearchSpace

    journal = RunStore(settings.data_dir).tune_journal_path("h2", "lowered")
    space = {k: tuple(v) for k, v in _space().items()}
    tuner = OptunaTuner(SearchSpace.from_declared(space), storage_path=journal,
                        study_name="lowered")
    told = [t for t in tuner.trials() if t.value is not None and t.evaluated]
    keys = [json.dumps(t.params, sort_keys=True) for t in told]
    assert told and len(keys) == len(set(keys))
    # The archive on disk holds every evaluated candidate's best cell, including the best.
    archive = MapElitesArchive.load(RunStore(settings.data_dir).archive_path("h2"))
    assert archive.best().speedup == pytest.approx(report.best_speedup)
