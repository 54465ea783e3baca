"""The packed GEMM micro-kernel (tools/lower/microkernels): correct against torch on awkward
shapes for every ISA path, forced, and falling back where the build target lacks the ISA."""

from __future__ import annotations

import ctypes
import hashlib
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from kernelwright.tools.lower.microkernels import (
    ISAS,
    default_blocking,
    detect_isa,
    strided_gemm_source,
)
from kernelwright.tools.lower.microkernels.ukernel import COMMON

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

# (batch, M, N, K, transposed A, transposed B, shared B, epilogue)
CASES = [
    (1, 1, 1, 1, False, False, False, "v"),
    (1, 37, 53, 29, False, False, False, "v"),
    (1, 13, 70, 300, True, False, False, "v > 0 ? v : 0.0f"),  # K past kc: two blocks
    (1, 64, 1, 67, False, True, False, "v + bias[kw_n]"),
    (1, 1, 65, 7, True, True, False, "v * 2.0f + res[kw_c]"),
    (3, 17, 19, 33, False, True, False, "v + bias[kw_n]"),  # batched, N x K operand
    (4, 5, 23, 11, False, False, True, "v"),  # batch folded into M (B shared)
    (2, 101, 45, 9, True, True, False, "v - res[kw_c]"),
]


def _operands(case, dtype=torch.float32):
    b, m, n, k, ta, tb, shared, _ = case
    a = torch.randn(b, k, m, dtype=dtype).transpose(1, 2) if ta else torch.randn(
        b, m, k, dtype=dtype)
    bb = torch.randn(1 if shared else b, n, k, dtype=dtype).transpose(1, 2) if tb else \
        torch.randn(1 if shared else b, k, n, dtype=dtype)
    return a, bb.expand(b, k, n) if shared else bb


def _reference(case, a, b, bias, res):
    v = torch.matmul(a.double(), b.double())
    epi = case[-1]
    if epi.startswith("v > 0"):
        return v.clamp_min(0)
    if "bias" in epi:
        return v + bias.double()
    if "* 2.0f" in epi:
        return v * 2 + res.double()
    return v - res.double() if "res" in epi else v


def _build(tmp: Path, source: str, flags: tuple[str, ...] = ("-march=native",)):
    key = hashlib.sha256((source + str(flags)).encode()).hexdigest()[:16]
    src, lib = tmp / f"g{key}.cpp", tmp / f"g{key}.so"
    src.write_text(source)
    subprocess.run(["g++", "-O2", *flags, "-fopenmp", "-fPIC", "-shared", str(src), "-o",
                    str(lib)], check=True, capture_output=True, text=True)
    return ctypes.CDLL(str(lib))


def _check_all(tmp: Path, isa, flags=("-march=native",), dtype=torch.float32, blocking=None,
               threads="auto"):
    ctype = "float" if dtype == torch.float32 else "double"
    bl = blocking or default_blocking(isa, ctype)
    bl = replace(bl, threads=threads)
    torch.manual_seed(0)
    runs, parts = [], []
    for i, case in enumerate(CASES):
        a, b = _operands(case, dtype)
        shape = (case[0], case[1], case[2], case[3])
        epi = case[-1] if dtype == torch.float32 else case[-1].replace("f", "")
        parts.append(strided_gemm_source(f"g{i}", shape, a.stride(), b.stride(), ctype, epi,
                                         bl, isa))
        runs.append((case, a, b))
    lib = _build(tmp, "\n".join(parts), flags)
    for i, (case, a, b) in enumerate(runs):
        c = torch.full((case[0], case[1], case[2]), float("nan"), dtype=dtype)
        bias, res = torch.randn(case[2], dtype=dtype), torch.randn_like(c)
        ptr = [ctypes.c_void_p(t.data_ptr()) for t in (a, b, c, bias, res)]
        getattr(lib, f"g{i}")(*ptr)
        want = _reference(case, a, b, bias, res).to(dtype)
        torch.testing.assert_close(c, want, atol=1e-4, rtol=1e-4,
                                   msg=lambda s, c=case: f"{c}: {s}")


@pytest.mark.parametrize("isa", ["avx2", "generic"])
def test_forced_isa_paths_match_torch_on_awkward_shapes(tmp_path, isa):
    if isa == "avx2" and detect_isa().name == "generic":
        pytest.skip("this CPU has no AVX2")
    _check_all(tmp_path, ISAS[isa])


def test_avx512_source_falls_back_where_the_target_lacks_it(tmp_path):
    # on an AVX-512 CPU this runs the intrinsics; elsewhere the guarded generic kernel
    _check_all(tmp_path, ISAS["avx512"])


def test_intrinsic_kernels_build_and_run_for_a_plain_x86_64_target(tmp_path):
    if not Path("/proc/cpuinfo").exists() or "x86" not in subprocess.run(
            ["uname", "-m"], capture_output=True, text=True).stdout:
        pytest.skip("x86-64 only")
    _check_all(tmp_path, ISAS["avx2"], flags=("-march=x86-64",))


def test_double_and_odd_blockings_and_thread_choices(tmp_path):
    isa = detect_isa()
    _check_all(tmp_path, isa, dtype=torch.float64, threads="team")
    odd = replace(default_blocking(isa), mr=5, nr=3 * isa.width("float"), kc=7, mc=10, nc=50)
    _check_all(tmp_path, isa, blocking=odd, threads="one")


def test_nr_that_is_not_a_vector_multiple_is_refused():
    isa = ISAS["avx2"]
    with pytest.raises(ValueError, match="multiple of the avx2 vector width"):
        strided_gemm_source("g", (1, 8, 8, 8), (0, 8, 1), (0, 8, 1),
                            blocking=replace(default_blocking(isa), nr=12), isa=isa)


def test_detect_isa_reads_the_flags():
    assert detect_isa("fpu sse avx2 fma").name == "avx2"
    assert detect_isa("avx2 avx512f fma").name == "avx512"
    assert detect_isa("neon asimd").name == "generic"
    assert detect_isa("avx2").name == "generic"  # AVX2 without FMA


def test_b_is_packed_per_tile_only_where_all_rows_fit_one_block():
    # the cases above run both forms; this checks that each is the one they run
    isa = detect_isa()
    bl = default_blocking(isa)

    def source(m, k, n=4096):  # many columns: no block is cut to make work for the cores
        return strided_gemm_source("g", (1, m, n, k), (0, k, 1), (0, n, 1), blocking=bl,
                                   isa=isa)

    assert "B packed per tile" in source(bl.mc - 1, 300)
    assert "B packed per tile" not in source(bl.mc + 1, 300)  # B would be packed per row block
    assert "B packed per tile" not in source(8, 4096)  # K too long for one L2-sized block


@pytest.mark.parametrize("flags", [("-march=native",), ("-mavx2", "-mfma"), ("-march=x86-64",)],
                         ids=["native", "avx2", "plain"])
def test_run_copy_writes_exactly_n_elements_on_every_isa_path(tmp_path, flags):
    """``kw_copy_f/d`` (a packed convolution run): whole vectors, then a masked tail that
    neither reads nor writes past ``n`` (guard values after it survive)."""
    if "x86" not in subprocess.run(["uname", "-m"], capture_output=True, text=True).stdout:
        pytest.skip("x86-64 flags")
    if flags[0] == "-mavx2" and detect_isa().name == "generic":
        pytest.skip("this CPU has no AVX2")
    lib = _build(tmp_path, COMMON + 'extern "C" void cf(float* d, const float* s, int n) '
                 '{ kw_copy_f(d, s, n); }\nextern "C" void cd(double* d, const double* s, '
                 'int n) { kw_copy_d(d, s, n); }\n', flags)
    for fn, dtype in ((lib.cf, torch.float32), (lib.cd, torch.float64)):
        for n in range(0, 41):
            src = torch.arange(1, 42, dtype=dtype)
            dst = torch.full((41,), -1.0, dtype=dtype)
            fn(ctypes.c_void_p(dst.data_ptr()), ctypes.c_void_p(src.data_ptr()), n)
            assert torch.equal(dst[:n], src[:n]) and bool((dst[n:] == -1).all()), (dtype, n)
