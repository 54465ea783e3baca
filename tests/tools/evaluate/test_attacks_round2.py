"""One test per attack class of issue 20 (round two) and the stale build cache of issue 22:
each attack is rejected or refused, and the next honest candidate in the same pool is
unaffected (correct, with an ordinary speedup)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from kw_eval_helpers import FIXTURES, candidate, task

from kernelwright.spec import Candidate
from kernelwright.spec.result import Flag
from kernelwright.tools.evaluate import Level, WorkerPool

pytestmark = pytest.mark.slow
ATTACKS = FIXTURES / "attacks"
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def attack(name: str, backend: str = "torch", **fill: object) -> Candidate:
    source = (ATTACKS / f"{name}.py").read_text()
    for key, value in fill.items():
        source = source.replace(f"__{key.upper()}__", str(value))
    return Candidate(source=source, backend=backend)


@pytest.fixture(scope="module")
def honest(pool: WorkerPool):
    """``honest()`` evaluates the honest GELU and checks it is correct and plausibly timed."""
    baseline = pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"))
    assert baseline.correct, baseline.error

    def check():
        r = pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"))
        assert r.correct, (r.error, r.flags)
        # a tampered clock reads far above 1x; a baseline timed while the machine was busy
        # may read far below it, so the bound is never under 10x
        assert r.speedup is not None and 0 < r.speedup < 10 * max(baseline.speedup, 1.0)
        return r

    return check


def test_negating_the_shared_weights_cannot_corrupt_the_next_candidate(pool, honest):
    r = pool.evaluate(task("matmul"), attack("negate_weights"))
    assert r.correct, r.error  # it raises when any write to the weights went through
    after = pool.evaluate(task("matmul"), candidate("candidates/linear_torch"))
    assert after.correct, after.error
    honest()


def test_build_options_outside_the_allow_list_never_reach_the_builder(pool, honest, settings):
    from kernelwright.tools.evaluate import builder

    marker = Path(settings.cache_dir) / "builder-ran-this"  # writable to the builder only
    r = pool.evaluate(task("gelu"), attack("builder_options", marker=marker))
    assert r.level == Level.BUILD_FAILED and not r.correct, r.error
    assert "is not allowed" in r.error and "-wrapper" in r.error
    pending = [b for _, _, builds in pool._pending for b in builds]
    assert not any("-wrapper" in b.get("options", []) for b in pending)
    # and the builder itself drops such a request, should one reach it another way
    request = {"backend": "cpp", "language": "cpp", "source": "int f() { return 1; }",
               "options": ["-wrapper", f"/bin/sh,-c,touch {marker}; exec \"$0\" \"$@\""]}
    assert builder.promote([request], settings, pool.sandbox.path, 60) == {"built": 0}
    assert not marker.exists()
    honest()


def _sycl_eval(pool: WorkerPool):
    from kernelwright.spec import Task

    gelu = Task.from_path(EXAMPLES / "tasks" / "l1_gelu.py")
    return pool.evaluate(gelu, Candidate.from_file(EXAMPLES / "candidates" /
                                                   "l1_gelu_naive_sycl.py"))


def test_a_stale_foreign_or_altered_sycl_shim_is_rebuilt_by_the_trusted_builder(
        pool, honest, settings):
    pytest.importorskip("dpctl")
    from kernelwright.tools.backends.sycl import shim_file

    shims = Path(settings.cache_dir) / "sycl-shim"
    # left by another venv, by an older runtime, and a bare folder (issue 22's reproduction)
    for key in ("anything", "0123456789abcdef-other-venv", "fedcba9876543210-runtime-2024"):
        (shims / key).mkdir(parents=True, exist_ok=True)
        (shims / key / "libkwsycl.so").write_bytes(b"not a library")
    r = _sycl_eval(pool)
    assert r.correct, r.error
    target = shim_file(settings)
    assert target.is_file()
    good = target.read_bytes()
    target.write_bytes(b"\x7fELF altered behind the trusted side's back")
    r = _sycl_eval(pool)
    assert r.correct, r.error
    assert target.read_bytes() == good  # removed and rebuilt, never loaded
    honest()


def test_a_shim_that_cannot_be_built_is_an_environment_error(pool, settings, monkeypatch):
    pytest.importorskip("dpctl")
    from kernelwright.errors import WorkerError
    from kernelwright.tools.backends.sycl import shim_file
    from kernelwright.tools.evaluate import builder

    monkeypatch.setattr(builder, "promote", lambda *a, **k: {"built": 0, "error": "g++: boom"})
    target = shim_file(settings)
    saved = target.read_bytes() if target.is_file() else None
    target.unlink(missing_ok=True)
    try:
        with pytest.raises(WorkerError, match="environment error.*Fix: run `kernelwright "
                                              "doctor`"):
            _sycl_eval(pool)
    finally:
        if saved is not None:
            target.write_bytes(saved)
            os.utime(target)
            from kernelwright.tools.evaluate.build_cache import BuildCache

            cache = BuildCache.of(settings)
            rel = str(target.relative_to(settings.cache_dir))
            cache.index.pop(rel, None)
            cache.adopt([rel])


def test_escape_sequences_in_errors_reach_no_surface_raw(pool, honest, settings):
    from typer.testing import CliRunner

    from kernelwright.cli import app

    r = pool.evaluate(task("gelu"), attack("escape_sequences"))
    assert not r.correct and r.error
    dumped = r.model_dump_json()
    for raw in ("\x1b", "\x9b", "\u202e", "\r"):
        assert raw not in r.error and raw not in dumped
    assert "\\x1b[32mverdict: correct" in r.error  # shown, visibly escaped
    env = {"KERNELWRIGHT_DATA_DIR": str(settings.data_dir),
           "KERNELWRIGHT_CACHE_DIR": str(settings.cache_dir), "KERNELWRIGHT_SEEDS": "3",
           "KERNELWRIGHT_MIN_TIME_S": "0.02", "KERNELWRIGHT_WORKER_THREADS": "1"}
    out = CliRunner().invoke(app, ["eval", str(FIXTURES / "tasks" / "gelu.py"),
                                   str(ATTACKS / "escape_sequences.py")], env=env)
    assert out.exit_code == 1, out.output
    assert "\x1b" not in out.output and "\x9b" not in out.output
    assert "\\x1b[2K" in out.output
    honest()


def test_zeros_within_a_loose_atol_are_a_value_mismatch(pool, honest):
    r = pool.evaluate(task("small_outputs"), attack("zeros_output"))
    assert r.level == Level.VALUE_MISMATCH and not r.correct, r.error
    assert "normwise relative error" in r.error
    ok = pool.evaluate(task("small_outputs"), candidate("candidates/small_outputs_torch"))
    assert ok.correct, ok.error
    honest()


@pytest.mark.parametrize("way", ["pop_modes", "no_dispatch", "thread", "prims", "redispatch",
                                 "kernel_getter", "python_dispatcher"])
def test_custom_kernels_only_cannot_be_bypassed(pool, honest, way):
    r = pool.evaluate(task("gelu_kernel"), attack("custom_only_bypass", way=way))
    assert r.error is None or "ValueError" not in r.error  # the fixture ran its way
    assert not r.correct, way
    if way != "thread":  # the thread's refusal dies with the thread; its caller fails later
        assert Flag.FRAMEWORK_OPERATOR in r.flags, (way, r.error)
        assert "contract allows custom kernels only" in r.error
    honest()


@pytest.mark.parametrize("way", ["cpp_dlsym", "cpp_python", "cpp_system", "ctypes_torch",
                                 "ctypes_self", "pythonapi"])
def test_custom_kernels_only_refuses_native_reach_outside_ones_kernels(pool, honest, way):
    r = pool.evaluate(task("gelu_kernel"), attack("native_reach", way=way))
    assert r.error is None or "ValueError" not in r.error  # the fixture ran its way
    assert not r.correct and Flag.FRAMEWORK_OPERATOR in r.flags, (way, r.error)
    assert "contract allows custom kernels only" in r.error
    own = pool.evaluate(task("gelu_kernel"), candidate("candidates/gelu_cpp"))
    assert own.correct, own.error  # an honest C++ kernel under the same contract
    honest()


@pytest.mark.parametrize("backend", [
    "torch", "cpp", pytest.param("sycl", marks=pytest.mark.requires_sycl)])
def test_custom_kernels_only_runs_without_numpy(pool, honest, backend, tmp_path):
    """numpy computes outside the framework's dispatcher: a custom-kernels-only candidate of a
    backend whose runtime needs no numpy runs in a process where no numeric package loads."""
    from kernelwright.spec import Task

    if backend == "sycl":  # the examples' SYCL GELU, on a custom-only copy of its task
        text = (EXAMPLES / "tasks" / "l1_gelu.py").read_text()
        (tmp_path / "l1_gelu.py").write_text(f'ALLOWED_SPACES = ["custom_kernel"]\n{text}')
        target = Task.from_path(tmp_path / "l1_gelu.py")
        own = Candidate.from_file(EXAMPLES / "candidates" / "l1_gelu_naive_sycl.py")
    else:
        target, own = task("gelu_kernel"), candidate("candidates/gelu_cpp")
    r = pool.evaluate(target, attack("custom_only_bypass", backend, way="numpy"))
    assert not r.correct
    assert "numpy is not available to a custom-kernels-only candidate" in (r.error or ""), \
        r.error
    mine = pool.evaluate(target, own)
    assert mine.correct, mine.error  # an honest kernel in such a process
    honest()  # and a framework-allowed task keeps numpy


def test_a_replaced_clock_rejects_the_timing_and_is_not_used(pool, honest, monkeypatch):
    import time

    from kernelwright.tools.evaluate import clocks

    real = time.perf_counter
    monkeypatch.setattr(time, "perf_counter", lambda: real() * 0.001)  # 1000x "faster"
    assert clocks.replaced() == ["time.perf_counter"]
    r = pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"))
    monkeypatch.undo()
    assert clocks.replaced() == []
    assert not r.correct and Flag.TIMER_TAMPERING in r.flags, r.error
    assert "time.perf_counter" in r.error and r.speedup is None
    honest()


def test_without_cgroups_results_are_weak_sandbox_with_the_reason(pool, honest, monkeypatch,
                                                                  capsys):
    from kernelwright.cli.doctor import warn_weak_sandbox
    from kernelwright.tools.evaluate import cgroups

    reason = "no per-candidate cgroup (memory, pids, freezer) can be made here (test)"
    monkeypatch.setattr(cgroups, "_probe", [reason])
    r = pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"))
    assert r.correct, r.error  # the candidate still runs, unheld, the weak way
    assert Flag.WEAK_SANDBOX in r.flags
    reasons = r.observations["weak_sandbox"]["reasons"]
    assert any(reason in text for text in reasons), reasons
    assert not any("bubblewrap" in text for text in reasons) or not pool.sandbox.available
    monkeypatch.setattr("kernelwright.cli.doctor._warned", [])
    warn_weak_sandbox(r.flags, reasons)
    err = capsys.readouterr().err
    assert "WEAK SANDBOX" in err and "cgroup" in err and "WITHOUT bubblewrap" not in err
    monkeypatch.undo()
    after = honest()
    assert Flag.WEAK_SANDBOX not in after.flags or cgroups.unavailable() is not None
