"""Application mode: rank kernels by weighted time share, pick targets, estimate the speedup."""

from __future__ import annotations

import pytest

from kernelwright.graphs.application import (
    KernelShare,
    application_speedup,
    pick_targets,
    plan_application,
)
from tests.tools.sampler.conftest import write_tiny_trace


def test_amdahl_and_targets():
    ranking = [KernelShare("a", 0.6, 10, 600), KernelShare("b", 0.3, 5, 300),
               KernelShare("c", 0.1, 1, 100)]  # fmt: skip
    assert [t.name for t in pick_targets(ranking, top=3, coverage=0.8)] == ["a", "b"]
    assert [t.name for t in pick_targets(ranking, top=1)] == ["a"]
    assert application_speedup(ranking, {"a": 2.0}) == pytest.approx(1 / (0.3 + 0.3 + 0.1))
    assert application_speedup(ranking, {}) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="not in this application"):
        application_speedup(ranking, {"zzz": 2.0})


def test_plan_application_on_a_trace(tmp_path, tmp_settings):
    write_tiny_trace(tmp_path / "app")
    plan = plan_application(tmp_path / "app", method="photon", top=2, settings=tmp_settings)
    shares = [k.share for k in plan.ranking]
    assert shares == sorted(shares, reverse=True) and sum(shares) == pytest.approx(1.0)
    assert {k.name for k in plan.ranking} == {"scale", "reduce", "big"}
    assert sum(k.invocations for k in plan.ranking) == pytest.approx(26)
    assert plan.targets[0] == plan.ranking[0] and len(plan.targets) <= 2
    top = plan.targets[0]
    expected = 1 / (1 - top.share + top.share / 4)
    assert plan.speedup({top.name: 4.0}) == pytest.approx(expected)
    assert plan.projected_cycles == pytest.approx(sum(k.projected_cycles for k in plan.ranking))


def _report(run_id: str, correct: bool, speedup: float | None):
    from kernelwright.graphs.runner import RunReport

    return RunReport(run_id=run_id, task="t", status="done", correct=correct,
                     best_speedup=speedup, speedup_low=None, speedup_high=None, evaluations=1,
                     roofline_fraction=None, kernel_path=None, best_candidate=None, store="s",
                     reason=None if correct else "no correct kernel in 1 evaluation")


def test_optimize_application_runs_the_mapped_targets_and_applies_amdahl(tmp_path, tmp_settings):
    from kernelwright.graphs.application import optimize_application

    write_tiny_trace(tmp_path / "app")
    plan = plan_application(tmp_path / "app", method="photon", top=3, coverage=1.0,
                            settings=tmp_settings)
    first, second, third = (k.name for k in plan.ranking)
    given = {first: tmp_path / "a.py", second: tmp_path / "b.py"}
    answers = {"a.py": _report("ra", True, 3.0), "b.py": _report("rb", False, None)}
    ran = []

    def run(path, settings):
        ran.append(path.name)
        return answers[path.name]

    result = optimize_application(plan, given, tmp_settings, run=run)
    assert ran == ["a.py", "b.py"]  # in share order, only the mapped targets
    by = {o.kernel: o for o in result.outcomes}
    assert by[first].speedup == 3.0 and by[first].run_id == "ra"
    assert by[second].speedup is None and "no correct kernel" in by[second].note
    assert by[third].task is None and f"--task {third}=FILE" in by[third].note
    share = plan.ranking[0].share
    assert result.speedup == pytest.approx(1 / (1 - share + share / 3.0))
    slower = optimize_application(plan, {first: tmp_path / "a.py"}, tmp_settings,
                                  run=lambda p, s: _report("rs", True, 0.5))
    assert slower.speedup == pytest.approx(1.0)  # a slower kernel is not adopted
    with pytest.raises(ValueError, match="does not run"):
        optimize_application(plan, {"nope": tmp_path / "a.py"}, tmp_settings, run=run)


def test_a_task_for_a_kernel_below_the_coverage_is_optimised_anyway(tmp_path, tmp_settings):
    from kernelwright.graphs.application import optimize_application

    write_tiny_trace(tmp_path / "app")
    plan = plan_application(tmp_path / "app", method="photon", top=1, coverage=0.01,
                            settings=tmp_settings)  # fmt: skip
    last = plan.ranking[-1]
    assert last not in plan.targets
    ran = []

    def run(path, settings):
        ran.append(path.name)
        return _report("r-last", True, 2.0)

    result = optimize_application(plan, {last.name: tmp_path / "z.py"}, tmp_settings, run=run)
    assert ran == ["z.py"]
    (mine,) = [o for o in result.outcomes if o.kernel == last.name]
    assert mine.run_id == "r-last" and mine.speedup == 2.0
    assert "optimised because --task names it" in mine.note
    assert result.speedup == pytest.approx(1 / (1 - last.share + last.share / 2.0))
