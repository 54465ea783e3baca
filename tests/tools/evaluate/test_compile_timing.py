"""torch.compile of the reference timed beside eager, in the reference runner, on a tiny model."""

from __future__ import annotations

import pytest
from kw_eval_helpers import candidate, task

from kernelwright.config import Settings
from kernelwright.tools.evaluate import WorkerPool


@pytest.fixture(scope="module")
def compile_pool(settings: Settings):
    with WorkerPool(settings) as p:
        yield p


def test_compile_is_timed_at_steady_state_with_no_recompiles(compile_pool, settings):
    on = settings.model_copy(update={"time_compile": True, "compile_timeout_s": 600})
    result = compile_pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"), settings=on)
    assert result.correct, result.error
    t = result.timing
    assert t.compile_median_s is not None and t.compile_median_s > 0
    assert t.compile_iqr_s is not None and t.compile_iqr_s >= 0
    assert t.compile_recompiles == 0  # one shape: the warm-up compiled the only graph
    # The same clock and inputs: a compiled GELU on 64x256 is within 20x of eager either way
    # (the broken column this replaces showed 0.015x: the compile itself was being timed).
    assert 0.05 < t.reference_median_s / t.compile_median_s < 20
    assert t.speedup_vs_compile == pytest.approx(t.compile_median_s / t.candidate_median_s)
    note = result.observations["torch_compile"]
    assert note["mode"] == "default" and note["rounds"] >= 5
    assert "compile" in result.phases_s

    # A second candidate in the same session reuses the compiled model: no compile cost.
    again = compile_pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"), settings=on)
    assert again.timing.compile_median_s is not None
    assert again.phases_s["compile"] < result.phases_s["compile"]


def test_compile_is_off_by_default(compile_pool, settings):
    result = compile_pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"),
                                   settings=settings)
    assert result.correct and result.timing.compile_median_s is None
    assert "torch_compile" not in result.observations


def test_an_unknown_mode_is_reported_not_raised(compile_pool, settings):
    bad = settings.model_copy(update={"time_compile": True, "compile_mode": "fastest"})
    result = compile_pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"),
                                   settings=bad)
    assert result.correct and result.timing.compile_median_s is None
    assert "unknown torch.compile mode 'fastest'" in result.observations["torch_compile"]["error"]


def test_a_compile_past_its_deadline_leaves_no_figure_and_a_fresh_session(settings):
    late = settings.model_copy(update={"time_compile": True, "compile_timeout_s": 0.001})
    with WorkerPool(settings) as pool:
        result = pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"), settings=late)
        assert result.correct and result.timing.compile_median_s is None
        assert "did not finish" in result.observations["torch_compile"]["error"]
        assert pool.starts == 1
        again = pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"),
                              settings=settings)
        assert again.correct and pool.starts == 2  # the stale reference runner was replaced
