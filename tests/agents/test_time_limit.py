"""The time limit bounds the work: candidates proposed as it passes are not evaluated after it."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from kernelwright.agents.critic import RuleCritic
from kernelwright.agents.profiler import RooflineProfiler
from kernelwright.config import Settings
from kernelwright.graphs.optimize import OptimizeContext
from kernelwright.graphs.runner import run_state, start_run
from kernelwright.graphs.store import RunStore
from tests.graphs.fakes import PEAKS, FakeCoder, FakeEvaluator, FakePlanner

TASK = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "l1_gelu.py"
LIMIT = 60.0


class Clock:
    """The graph's clock; ``skip`` moves it on (a slow LLM reply, without the wait)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def time(self) -> float:
        return time.time() + self.offset


class SlowSecondRound(FakeCoder):
    """Round two's requests run past the time limit (like an LLM coder's slow reply)."""

    def __init__(self, clock: Clock) -> None:
        self.clock, self.calls = clock, 0

    def propose(self, task, contract, plan, history, n):
        self.calls += 1
        if self.calls == 2:
            self.clock.offset += 2 * LIMIT
        return super().propose(task, contract, plan, history, n)


def test_candidates_proposed_past_the_time_limit_are_kept_not_evaluated(tmp_path, monkeypatch):
    import kernelwright.graphs.optimize as optimize

    clock = Clock()
    monkeypatch.setattr(optimize, "time", clock)
    settings = Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", budget=8,
                        time_limit_s=LIMIT)
    evaluator = FakeEvaluator()

    @contextlib.contextmanager
    def factory(settings, store, run_id):
        yield OptimizeContext(settings=settings, store=store, planner=FakePlanner(),
                              coder=SlowSecondRound(clock), profiler=RooflineProfiler(PEAKS),
                              critic=RuleCritic(patience=9, time_limit_s=LIMIT),
                              evaluate=evaluator, batch_size=2)

    report = start_run(TASK, settings, run_id="t1", context_factory=factory)
    assert len(evaluator.calls) == 2 == report.evaluations  # round one only
    store = RunStore(settings.data_dir)
    state = run_state("t1", settings)
    assert len(state["pending"] or []) == 0 and state["round_sizes"][:2] == [2, 0]
    assert "time limit reached" in state["decisions"][-1].reason
    assert len(store.evaluations("t1")) == 2
    kept = list((store.run_dir("t1") / "candidates").glob("*.py"))
    assert len(kept) == 4  # round two's candidates are kept, for a later run to use
