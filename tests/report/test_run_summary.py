"""The summary the report renders agrees with what the runs stored."""

from __future__ import annotations

import math

import pytest

from kernelwright.errors import RunStoreError
from kernelwright.graphs.run_summary import build_report_data

from .conftest import HOSTILE


def test_summary_of_a_scripted_run(scripted_store):
    data = build_report_data(scripted_store, ["good"])
    (run,) = data.runs
    assert [c.order for c in run.candidates] == [1, 2, 3, 4, 5, 6]
    assert [c.params["block"] for c in run.candidates] == [1, 2, 3, 4, 5, 6]
    wrong = run.candidates[2]
    assert not wrong.correct and wrong.level_name == "value_mismatch"
    assert "nondeterministic" in wrong.flags and HOSTILE in wrong.error
    # blocks 4, 5 and 6 all reach 3.0x: the earliest wins the tie
    assert run.best.params["block"] == 4 and run.best.speedup == pytest.approx(3.0)
    assert (run.best.speedup_low, run.best.speedup_high) == pytest.approx((2.7, 3.3))
    assert run.best_so_far() == [(1, 1.5), (2, 2.0), (3, 2.0), (4, 3.0), (5, 3.0), (6, 3.0)]
    assert run.evidence.seeds_total == 6 and run.evidence.max_abs_error == pytest.approx(1e-6)
    assert run.flags == ["nondeterministic"]
    assert run.implementation_space == "custom_kernel"
    # evaluations are dated by the checkpoints, in evaluation order, within the run's life
    times = [c.finished_at for c in run.candidates]
    assert times == sorted(times) and run.started <= times[0] <= times[-1] <= run.updated
    improvements = [s for _, s in run.best_over_time()]
    assert improvements == [1.5, 2.0, 3.0]


def test_best_kernel_is_diffed_against_its_recorded_parent(scripted_store):
    (run,) = build_report_data(scripted_store, ["good"]).runs
    diff = run.best_source
    parent = run.candidates[1]  # block 2 was the best when block 4 was proposed
    assert diff.against == "parent" and diff.against_id == parent.candidate_id
    assert "-BLOCK = 2" in diff.diff and "+BLOCK = 4" in diff.diff


def test_campaign_metrics_follow_kernelbench(scripted_store):
    data = build_report_data(scripted_store, ["good", "hostile"])
    assert data.fast_0 == 1.0 and data.fast_p(1.0) == 1.0 and data.fast_p(3.0) == 0.0
    assert data.geomean_speedup == pytest.approx(3.0)
    usage = {u.agent: u for u in data.usage_totals}
    assert usage["coder"].input_tokens == 1200 and usage[HOSTILE].cost_usd is None


def test_archive_holds_one_elite_per_occupied_cell(scripted_store):
    (run,) = build_report_data(scripted_store, ["good"]).runs
    cells = [tuple(c.cell) for c in run.archive.cells]
    assert len(cells) == len(set(cells)) >= 1
    assert all(c.cell is not None for c in run.candidates)
    best_cell = next(c for c in run.archive.cells if tuple(c.cell) == tuple(run.best.cell))
    assert math.isclose(best_cell.speedup, 3.0)


def test_unknown_run_names_the_fix(scripted_store):
    with pytest.raises(RunStoreError, match="kernelwright runs"):
        build_report_data(scripted_store, ["good", "nope"])
