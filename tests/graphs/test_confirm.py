"""The honest winner: the top candidates re-measured before the best is named (stub timers)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from kernelwright.agents.critic import RuleCritic
from kernelwright.agents.profiler import RooflineProfiler
from kernelwright.config import Settings
from kernelwright.graphs.confirm import confirm, top_candidates
from kernelwright.graphs.optimize import OptimizeContext
from kernelwright.graphs.runner import run_state, start_run
from kernelwright.spec import Candidate
from kernelwright.spec.plan import Profile, best_profile
from kernelwright.spec.result import EvalResult, Level

from .fakes import PEAKS, FakeCoder, FakePlanner, timed_result

TASK = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "l1_gelu.py"
TRUE_MS = {1: 1.0, 2: 0.8, 3: 0.5, 4: 0.45, 5: 0.4, 6: 0.6, 7: 0.9}  # block -> real median


class NoisyTimer:
    """First figures: the true medians, except block 3, whose one timing caught a lucky
    moment (0.2 ms: "5x"). Re-measurement: the true medians, and a reference that moved."""

    def __init__(self) -> None:
        self.first: list[int] = []
        self.again: list[int] = []

    def evaluate(self, task, candidate):
        block = candidate.params["block"]
        self.first.append(block)
        return timed_result(task, candidate, 1.0, 0.2 if block == 3 else TRUE_MS[block])

    def remeasure(self, task, candidate):
        block = candidate.params["block"]
        self.again.append(block)
        ref = 1.0 + 0.1 * len(self.again)  # the reference's median drifts between them
        return timed_result(task, candidate, ref, TRUE_MS[block])


def _factory(timer: NoisyTimer, with_confirm: bool):
    @contextlib.contextmanager
    def factory(settings, store, run_id):
        yield OptimizeContext(settings=settings, store=store, planner=FakePlanner(),
                              coder=FakeCoder(), profiler=RooflineProfiler(PEAKS),
                              critic=RuleCritic(patience=2), evaluate=timer.evaluate,
                              remeasure=timer.remeasure if with_confirm else None,
                              batch_size=2)  # fmt: skip

    return factory


@pytest.fixture
def settings(tmp_path):
    return Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", budget=7,
                    confirm_rounds=3)


def test_remeasurement_changes_the_winner_when_the_first_figure_was_noise(settings):
    timer = NoisyTimer()
    report = start_run(TASK, settings, run_id="r1", context_factory=_factory(timer, True))
    # The top 3 by first figures (fastest first), in interleaved rounds: A, B, C, A, B, C, ...
    assert timer.again == [3, 5, 4] * settings.confirm_rounds
    assert Path(report.kernel_path).read_text() == "# block 5"  # not the noisy block 3
    assert report.remeasured and report.verdict == "faster"
    # Every figure against one reference: the median of all nine re-measured reference medians
    # (1.1, 1.2, ..., 1.9 ms: it drifted), each candidate by the median of its own.
    assert report.reference_ms == pytest.approx(1.5)
    assert report.candidate_ms == pytest.approx(0.4)
    assert report.best_speedup == pytest.approx(1.5 / 0.4)
    confirmed = run_state("r1", settings)["confirmed"]
    assert {p.candidate_id for p in confirmed} == {
        p.candidate_id for p in run_state("r1", settings)["profiles"]
        if p.params["block"] in (3, 4, 5)}


def test_without_remeasurement_the_noise_would_have_won(settings):
    timer = NoisyTimer()
    report = start_run(TASK, settings, run_id="r2", context_factory=_factory(timer, False))
    assert timer.again == [] and not report.remeasured
    assert Path(report.kernel_path).read_text() == "# block 3"
    assert report.best_speedup == pytest.approx(5.0)


def _profile(cid: str, ref_ms: float, cand_ms: float) -> Profile:
    return Profile(candidate_id=cid, correct=True, level=5, speedup=ref_ms / cand_ms,
                   reference_ms=ref_ms, candidate_ms=cand_ms)


def test_a_moving_reference_is_not_an_improvement():
    a = _profile("a", 3.90, 2.04)  # 1.91x
    b = _profile("b", 6.19, 2.27)  # "2.73x", but its own time is slower
    assert b.speedup > a.speedup
    assert best_profile([a, b]) is a
    assert top_candidates([b, a], 1) == [a]


def test_a_remeasured_profile_outranks_first_figures_and_failures_drop_out():
    class Stub:
        def __init__(self):
            self.results = {"a": (2.0, 1.0), "b": (2.2, 0.5)}

        def __call__(self, task, candidate):
            cid = candidate.source
            if cid == "c":
                return EvalResult(task_name="t", candidate_id=cid, backend="torch",
                                  level=Level.RUNTIME_ERROR, error="timed round 3: wrong")
            return timed_result(task, candidate, *self.results[cid])

    class T:
        name = "t"

    first = [_profile("a", 1.0, 0.1), _profile("b", 1.0, 0.2), _profile("c", 1.0, 0.3)]
    confirmed = confirm(T(), None, first, 3, lambda cid: Candidate(source=cid, backend="torch"),
                        Stub(), lambda cand, res, plan: _from(cand, res))
    by_id = {p.candidate_id: p for p in confirmed}
    assert all(p.remeasured for p in confirmed)
    assert not by_id["c"].correct
    assert by_id["a"].speedup == pytest.approx(2.1 / 1.0)  # median of 2.0 and 2.2
    assert by_id["b"].speedup == pytest.approx(2.1 / 0.5)
    assert best_profile([*first, *confirmed]).candidate_id == "b"


def _from(candidate, result) -> Profile:
    t = result.timing
    return Profile(candidate_id=candidate.source, correct=result.correct, level=result.level,
                   speedup=t.speedup if t else None, candidate_ms=t.candidate_ms if t else None,
                   reference_ms=t.reference_ms if t else None)
