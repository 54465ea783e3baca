"""The reference itself as a candidate, and a search that decides on re-measured figures
(stub timers: every median below is what the fake clock says, so each assertion can fail)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from kernelwright.agents.critic import RuleCritic
from kernelwright.agents.profiler import RooflineProfiler
from kernelwright.config import Settings
from kernelwright.graphs.campaign_metrics import campaign_summary
from kernelwright.graphs.challenge import challengers
from kernelwright.graphs.confirm import measure_rounds
from kernelwright.graphs.optimize import OptimizeContext
from kernelwright.graphs.run_summary import summarize_run
from kernelwright.graphs.runner import run_state, start_run
from kernelwright.graphs.store import RunStore, store_root
from kernelwright.spec import Candidate, Task
from kernelwright.spec.plan import Profile, best_profile
from kernelwright.spec.reference import REFERENCE_ORIGIN, answer_of, reference_candidate

from .fakes import PEAKS, FakeCoder, FakePlanner, timed_result

TASK = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "l1_gelu.py"


class Clock:
    """Own medians per block (``true``), a first figure per block (``first``, noise allowed),
    the reference (as a candidate) at ``ref_ms``; records every call in order."""

    def __init__(self, true: dict[int, float], first: dict[int, float] | None = None,
                 ref_ms: float = 1.0) -> None:
        self.true, self.first, self.ref_ms = true, first or {}, ref_ms
        self.calls: list[str] = []  # "1", "2", ... or "ref", first evaluations
        self.again: list[str] = []  # re-measurements (challenges and the final one)

    @staticmethod
    def _name(candidate) -> str:
        return "ref" if candidate.origin == REFERENCE_ORIGIN else str(candidate.params["block"])

    def _ms(self, candidate, noisy: bool) -> float:
        if candidate.origin == REFERENCE_ORIGIN:
            return self.ref_ms
        block = candidate.params["block"]
        return self.first.get(block, self.true[block]) if noisy else self.true[block]

    def evaluate(self, task, candidate):
        self.calls.append(self._name(candidate))
        return timed_result(task, candidate, 1.0, self._ms(candidate, noisy=True))

    def remeasure(self, task, candidate):
        self.again.append(self._name(candidate))
        return timed_result(task, candidate, 1.0, self._ms(candidate, noisy=False))


def _team(clock: Clock, *, reference=True, challenge=True, confirm=True):
    @contextlib.contextmanager
    def factory(settings, store, run_id):
        yield OptimizeContext(
            settings=settings, store=store, planner=FakePlanner(), coder=FakeCoder(),
            profiler=RooflineProfiler(PEAKS), critic=RuleCritic(patience=2),
            evaluate=clock.evaluate, remeasure=clock.remeasure if confirm else None,
            challenge=clock.remeasure if challenge else None, evaluate_reference=reference,
            batch_size=2)  # fmt: skip

    return factory


@pytest.fixture
def settings(tmp_path):
    return Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", budget=4,
                    confirm_rounds=2, challenge_rounds=2)


def test_the_reference_is_chosen_when_every_kernel_is_slower(settings):
    clock = Clock(true={1: 2.6, 2: 2.0, 3: 2.4, 4: 3.0}, ref_ms=0.76)
    report = start_run(TASK, settings, run_id="slow", context_factory=_team(clock))
    assert clock.calls[0] == "ref"  # evaluated by the same harness, before any kernel
    assert report.evaluations == 4 and clock.calls.count("ref") == 1  # not in the budget
    assert report.answer == "reference" and report.verdict == "keep_pytorch"
    # The best kernel stays reported on its own (fast_p counts it, not the reference).
    assert report.best_candidate != reference_candidate(Task.from_path(TASK)).id
    assert report.candidate_ms == pytest.approx(2.0)
    assert report.best_speedup == pytest.approx(0.5)
    assert report.reference_candidate_ms == pytest.approx(0.76)
    state = run_state("slow", settings)
    assert state["reference"].space == "framework"
    assert state["reference"].speedup == pytest.approx(1 / 0.76)
    store = RunStore(store_root(settings, None))
    # Kept apart from the budget's records: the evaluation log and results/ hold kernels only.
    assert len(store.evaluations("slow")) == 4
    assert len(list((store.run_dir("slow") / "results").glob("*.json"))) == 4
    assert store.load_reference("slow")["profile"]["space"] == "framework"
    summary = summarize_run(store, "slow", state)
    assert summary.answer == "reference" and summary.verdict == "keep_pytorch"
    assert summary.reference is not None and summary.reference.space == "framework"
    assert summary.best is not None and summary.best.origin != REFERENCE_ORIGIN


def test_a_kernel_faster_than_the_reference_is_the_answer(settings):
    clock = Clock(true={1: 0.9, 2: 0.5, 3: 0.7, 4: 0.8}, ref_ms=1.0)
    report = start_run(TASK, settings, run_id="fast", context_factory=_team(clock))
    assert report.answer == "kernel" and report.verdict == "faster"
    assert report.candidate_ms == pytest.approx(0.5)
    assert "ref" in clock.again  # the final re-measurement interleaves the reference


def test_without_the_framework_space_there_is_no_reference(settings, tmp_path):
    task = tmp_path / "custom_only.py"
    task.write_text(TASK.read_text() + "\nALLOWED_SPACES = ['custom_kernel']\n")
    clock = Clock(true={1: 2.6, 2: 2.0, 3: 2.4, 4: 3.0}, ref_ms=0.76)
    report = start_run(task, settings, run_id="custom", context_factory=_team(clock))
    assert "ref" not in clock.calls and report.answer == "kernel"
    assert report.verdict == "keep_pytorch"  # slower kernels still say so


def test_a_challenge_changes_the_winner_when_the_first_figure_was_noise(settings):
    # Block 3's first figure caught a lucky moment (0.2 ms); its true median is 0.7 ms.
    true = {1: 0.9, 2: 0.6, 3: 0.7, 4: 0.8}
    clock = Clock(true=true, first={3: 0.2})
    report = start_run(TASK, settings, run_id="ch", context_factory=_team(clock, confirm=False))
    # Round 2 (blocks 3, 4): block 3 would be the new best, so it, the incumbent (block 2)
    # and the reference are re-measured in interleaved rounds before the search decides.
    assert clock.again == ["3", "2", "ref"] * settings.challenge_rounds
    assert Path(report.kernel_path).read_text() == "# block 2"
    assert report.candidate_ms == pytest.approx(0.6)
    # The same run without challenges names the noise.
    noisy = start_run(TASK, settings, run_id="noisy",
                      context_factory=_team(Clock(true=true, first={3: 0.2}), challenge=False,
                                            confirm=False))
    assert Path(noisy.kernel_path).read_text() == "# block 3"


def _p(cid: str, ms: float, origin: str = "a") -> Profile:
    return Profile(candidate_id=cid, correct=True, level=5, speedup=1.0 / ms,
                   reference_ms=1.0, candidate_ms=ms, origin=origin)


def test_only_a_would_be_new_best_is_challenged():
    old = [_p("a", 0.5)]
    assert challengers([*old, _p("b", 0.6)], 1) is None  # slower: nothing to decide
    assert challengers([*old, _p("b", 0.5)], 1) is None  # a tie keeps the incumbent
    assert challengers([_p("b", 0.1)], 1) is None  # no incumbent yet
    challenger, incumbent = challengers([*old, _p("b", 0.6), _p("c", 0.4)], 2)
    assert (challenger.candidate_id, incumbent.candidate_id) == ("c", "a")


def test_the_reference_is_never_the_best_kernel_nor_in_fast_p():
    ref = _p("r", 0.1, origin=REFERENCE_ORIGIN)
    kernel = _p("k", 0.5)
    assert best_profile([ref, kernel]) is kernel
    assert answer_of(kernel, ref) is ref
    state = {"campaign_id": "c", "tasks": ["t.py"], "budget_per_task": 4, "slices": [
        {"task": "t.py", "run_id": "c--t", "spent": 4, "best_after": 0.5, "best_low": 0.4,
         "best_high": 0.6, "chosen": "reference"}]}
    summary = campaign_summary(state)
    assert summary.rows[0].chosen == "reference"
    assert summary.kernelbench.fast_1 == 0.0  # the kernel's 0.5x, not the reference's 1.0x
    assert summary.kernelbench.fast_0 == 1.0


def test_rounds_interleave_the_candidates():
    order: list[str] = []

    def remeasure(task, candidate):
        order.append(candidate.source)
        ms = {"A": 0.5, "B": 0.6, "ref": 1.0}[candidate.source]
        return timed_result(task, candidate, 1.0 + 0.1 * len(order), ms)

    class T:
        name = "t"

    cands = [Candidate(source=s, backend="torch") for s in ("A", "B", "ref")]
    out = measure_rounds(T(), None, cands, 3, remeasure,
                         lambda c, r, plan: Profile(candidate_id=c.id, correct=r.correct,
                                                    level=r.level))
    assert order == ["A", "B", "ref"] * 3
    # One reference: the median of all nine reference medians (1.1 ... 1.9 ms).
    assert [p.reference_ms for p in out] == pytest.approx([1.5, 1.5, 1.5])
    assert out[0].speedup == pytest.approx(1.5 / 0.5)


def test_the_report_says_the_reference_was_chosen(settings):
    from kernelwright.report.markdown import verdict_line

    clock = Clock(true={1: 2.6, 2: 2.0, 3: 2.4, 4: 3.0}, ref_ms=0.76)
    start_run(TASK, settings, run_id="md", context_factory=_team(clock))
    summary = summarize_run(RunStore(store_root(settings, None)), "md",
                            run_state("md", settings))
    line = verdict_line(summary)
    assert line.startswith("keep PyTorch (0.50x")
    assert "answer: the reference itself (framework, 0.76 ms)" in line
