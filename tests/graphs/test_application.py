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
