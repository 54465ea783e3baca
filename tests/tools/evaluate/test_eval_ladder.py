"""The correctness ladder 0-5 and an honest candidate's timing."""

from __future__ import annotations

import shutil

import pytest
from kw_eval_helpers import FIXTURES

from kernelwright.tools.evaluate import Flag, Level, evaluate


@pytest.mark.slow
def test_honest_candidate_is_correct_and_timed(run):
    r = run("gelu", "candidates/gelu_torch")
    assert r.level == Level.CORRECT and r.correct, r.error
    assert r.timing is not None and r.timing.speedup > 0 and r.timing.repeats >= 3
    assert r.timing.speedup_low <= r.timing.speedup <= r.timing.speedup_high
    assert [v.variant for v in r.variants] == ["nominal", "half_plus_one", "quarter_odd"]
    assert all(v.ok and v.seeds == 3 for v in r.variants)
    assert r.speedup == r.timing.speedup
    assert {"worker_start", "build", "verify", "time"} <= set(r.phases_s)


def test_syntax_error_is_level_0(run):
    r = run("gelu", "candidates/syntax_error")
    assert r.level == Level.SYNTAX_ERROR and "line 3" in r.error


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
@pytest.mark.slow
def test_cpp_build_error_is_level_1_with_compiler_log(run):
    r = run("gelu", "candidates/build_error_cpp")
    assert r.level == Level.BUILD_FAILED
    assert "undeclared_thing" in r.error and "error" in r.error


def test_build_error_from_constructor_is_level_1(run):
    r = run("gelu", "candidates/build_error_raised")
    assert r.level == Level.BUILD_FAILED and "expected ';'" in r.error


def test_exception_in_forward_is_level_2(run):
    r = run("gelu", "candidates/forward_raises")
    assert r.level == Level.RUNTIME_ERROR and "index out of range" in r.error


def test_missing_model_new_is_level_2(run):
    r = run("gelu", "candidates/no_model_new")
    assert r.level == Level.RUNTIME_ERROR and "ModelNew" in r.error


def test_wrong_shape_is_level_3(run):
    r = run("gelu", "candidates/wrong_shape")
    assert r.level == Level.SHAPE_MISMATCH and "[256, 64]" in r.error


def test_wrong_values_is_level_4(run):
    r = run("gelu", "candidates/wrong_values")
    assert r.level == Level.VALUE_MISMATCH
    assert r.variants[0].max_abs_error and r.variants[0].max_abs_error > 0.1
    assert not r.flags  # deterministic and wrong: no poison-related flag


@pytest.mark.slow
def test_weights_are_shared_through_state_dict(run):
    r = run("matmul", "candidates/linear_extra_rng")
    assert r.correct, r.error


def test_observer_hooks_wrap_every_timed_candidate_call(run):
    probe = FIXTURES / "candidates/observer_probe.py"
    r = run("gelu", "candidates/gelu_torch", observers=[f"{probe}:CountingObserver"])
    counts = r.observations[f"{probe}:CountingObserver"]
    assert counts["starts"] == counts["finishes"] == r.timing.repeats


@pytest.mark.slow
def test_evaluate_without_pool_accepts_paths_and_source(settings):
    source = (FIXTURES / "candidates/gelu_torch.py").read_text()
    r = evaluate(FIXTURES / "tasks/gelu.py", source, settings=settings)
    assert r.correct and r.backend == "torch" and r.phases_s["worker_start"] > 0
    assert Flag.SUSPICIOUS_SPEEDUP not in r.flags


@pytest.mark.slow
def test_sys_exit_in_forward_is_a_runtime_error_without_restart(run, pool):
    starts = pool.starts
    r = run("gelu", "candidates/exits_in_forward")
    assert r.level == Level.RUNTIME_ERROR and "SystemExit" in r.error
    assert run("gelu", "candidates/gelu_torch").correct
    assert pool.starts == starts
