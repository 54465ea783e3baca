"""Crashing candidates become failed results, and the next evaluation in the pool still works."""

from __future__ import annotations

import pytest
from kw_eval_helpers import candidate, task

from kernelwright.tools.evaluate import Level, WorkerPool


@pytest.fixture(scope="module")
def crash_pool(settings):
    with WorkerPool(settings.model_copy(update={"call_timeout_s": 4.0})) as p:
        yield p


def _then_honest_works(crash_pool):
    r = crash_pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"))
    assert r.correct, r.error


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("segfault", "SIGSEGV"),  # the error carries faulthandler's "Fatal Python error"
        ("abort", "SIGABRT"),
        ("infinite_loop", "timed out after 4 s"),
    ],
)
@pytest.mark.slow
def test_crash_is_a_failed_result_and_pool_recovers(crash_pool, name, expected):
    r = crash_pool.evaluate(task("gelu"), candidate(f"crashes/{name}"))
    starts = crash_pool.starts
    assert r.level == Level.RUNTIME_ERROR and not r.correct
    assert expected in r.error
    if name == "segfault":
        assert "Fatal Python error" in r.error and "forward" in r.error
    _then_honest_works(crash_pool)
    assert crash_pool.starts == starts  # the task's session survives: runners are per candidate


@pytest.mark.slow
def test_allocation_beyond_the_memory_limit_fails_cleanly(crash_pool):
    assert crash_pool.settings.memory_limit_mb <= 4096  # the candidate asks for 8 GiB
    r = crash_pool.evaluate(task("gelu"), candidate("crashes/huge_alloc"))
    assert not r.correct and r.level == Level.RUNTIME_ERROR
    assert "allocate" in r.error.lower() or "memory" in r.error.lower()
    _then_honest_works(crash_pool)


def test_segfault_error_includes_the_python_traceback(crash_pool):
    r = crash_pool.evaluate(task("gelu"), candidate("crashes/segfault"))
    assert "Fatal Python error" in r.error and "forward" in r.error


@pytest.mark.slow
def test_evaluating_with_per_call_settings_mutates_neither_them_nor_the_pool(crash_pool):
    pool_before = crash_pool.settings.model_dump()
    per_call = crash_pool.settings.model_copy(update={"seeds": 4, "min_time_s": 0.05})
    before = per_call.model_dump()
    r = crash_pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"), settings=per_call)
    assert r.correct, r.error
    assert per_call.model_dump() == before and crash_pool.settings.model_dump() == pool_before
