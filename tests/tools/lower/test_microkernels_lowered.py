"""The lowering's C++ GEMM on the packed micro-kernel: every blocking correct, the epilogue
fused in the tile's store, and the default program verified by the real harness."""

from __future__ import annotations

import pytest
from lower_helpers import check_lowered, task

from kernelwright.tools.lower import lower_task
from kernelwright.tools.lower.microkernels import default_blocking, detect_isa

W = detect_isa().width("float")
BLOCKINGS = [
    {"g0.algo": "packed"},
    {"g0.algo": "packed", "g0.mr": 4, "g0.nr": 3 * W, "g0.kc": 128, "g0.mc": 48,
     "g0.nc": 256, "g0.threads": "team"},
    {"g0.algo": "packed", "g0.mr": 8, "g0.nr": W, "g0.threads": "one"},
]


@pytest.mark.parametrize("name", ["gemm_epi", "bmm", "matmul_kn", "matmul_4d",
                                  "einsum_split_batch"])
def test_packed_gemm_is_correct_for_every_blocking(name):
    prog = lower_task(task(name), "cpp")
    for params in BLOCKINGS:
        p = prog.with_params(params)
        assert "packed GEMM" in p.source
        check_lowered(p)


def test_packed_gemm_in_half_storage_and_in_double():
    prog = lower_task(task("matmul_dtypes"), "cpp")
    for mr in (6, 4):
        p = prog.with_params({**{k: "packed" for k in prog.space if k.endswith(".algo")},
                              **{k: mr for k in prog.space if k.endswith(".mr")}})
        assert p.source.count("packed GEMM") == 6  # 2 groups x 3 signatures
        check_lowered(p, tol=1e-2)


def test_packed_gemm_fuses_the_epilogue_into_one_kernel():
    prog = lower_task(task("matmul_4d"), "cpp").with_params({"g0.algo": "packed"})
    kernels = [k.split("(")[0].split()[-1] for k in prog.source.split("\n")
               if k.startswith('extern "C" void')]
    assert kernels and all(k.endswith("_0") for k in kernels)  # one kernel per signature
    assert prog.describe().count("gemm over") == 1


def test_packed_gemm_space_and_defaults():
    prog = lower_task(task("gemm_epi"), "cpp")  # 13 x 29 x 37: too small to pack
    assert prog.params["g0.algo"] == "tile"
    assert set(prog.space["g0.algo"]) == {"packed", "tile"}
    assert all(nr % W == 0 for nr in prog.space["g0.nr"])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["l1_matmul", "l2_matmul_bias_gelu"])
def test_default_lowered_gemm_is_packed_and_the_harness_verifies_it(name, harness):
    from kernelwright.spec import Task
    from kernelwright.testing.harness_check import task_path

    prog = lower_task(Task.from_path(task_path(name)), "cpp")
    custom = prog.with_params({k: "kernel" for k in prog.space if k.endswith(".impl")})
    assert custom.params["g0.algo"] == "packed"
    assert "packed GEMM" in custom.source
    result = harness.check(name, custom.candidate.source)
    assert result.correct, result


def _conv_params(prog, **extra):
    keys = [k for k in prog.space if k.endswith(".algo")]
    assert keys, "the convolution offers no algorithm choice"
    out = {k: "gemm" for k in keys}
    out.update({k: "kernel" for k in prog.space if k.endswith(".impl")})  # ours, not oneDNN
    for key in keys:
        out.update({key.replace(".algo", f".{p}"): v for p, v in extra.items()})
    return out


# convt, convt_forms and conv3d_odd_cout hold transposed convolutions (stride 1 and strided);
# conv_runs has rows wide enough that B panels pack as runs of the input
@pytest.mark.parametrize("name", ["conv_groups", "conv_bn", "conv3d_odd_cout", "convt",
                                  "convt_forms", "conv_runs"])
def test_convolution_as_implicit_gemm_is_correct(name):
    prog = lower_task(task(name), "cpp")
    for extra in ({}, {"mr": 4, "kc": 5, "nc": 3 * W, "threads": "team"}, {"nr": W}):
        p = prog.with_params(_conv_params(prog, **extra))
        assert "packed GEMM" in p.source and "kw_nrun" in p.source
        # stride-1 runs of a float input are block copies (whole vectors, masked tail)
        assert "kw_copy_f(kw_dst" in p.source or name != "conv_runs"
        check_lowered(p)


def test_transposed_phases_no_tap_reaches_skip_their_product():
    """Phases of an all-zero K give the bias through the epilogue, and the GEMM of those
    batches is skipped (``GemmProblem.k_empty``)."""
    prog = lower_task(task("convt_empty_phases"), "cpp")
    for extra in ({}, {"mr": 4, "kc": 5, "nc": 3 * W, "threads": "team"}):
        p = prog.with_params(_conv_params(prog, **extra))
        assert p.source.count("continue;") >= 3
        check_lowered(p)


def test_depthwise_and_tiny_convolutions_stay_direct():
    from kernelwright.tools.lower.microkernels.lowered_conv import conv_defaults

    class Fake:  # a depthwise 3x3 over 32 channels: K = 9 per group
        transposed, groups, dtype = False, 32, None
        shape = (1, 32, 8, 8)

        class x:  # noqa: N801
            shape = (1, 32, 10, 10)

        class w:  # noqa: N801
            shape = (32, 1, 3, 3)

    import torch
    Fake.dtype = torch.float32
    assert conv_defaults(Fake)["algo"] == "direct"
    Fake.groups, Fake.w.shape = 1, (32, 32, 3, 3)
    assert conv_defaults(Fake)["algo"] == "gemm"


def test_register_tile_rows_fit_the_output_channels():
    from kernelwright.tools.lower.microkernels.packed_gemm import fitted_mr

    choices = [4, 6, 8, 12]
    # 32 or 64 rows: 8-row tiles pad nothing, 12-row tiles pad 4 of 36 and 8 of 72
    assert fitted_mr(32, 12, choices) == 8 and fitted_mr(64, 12, choices) == 8
    assert fitted_mr(48, 12, choices) == 12 and fitted_mr(200, 12, choices) == 12
    assert fitted_mr(5, 12, choices) == 6  # never above the ISA's default (registers)
    assert fitted_mr(32, 6, choices) == 4 and fitted_mr(64, 6, choices) == 6
    prog = lower_task(task("conv_runs"), "cpp")  # 16 output channels per convolution
    mrs = {v for k, v in prog.params.items() if k.endswith(".mr")}
    assert mrs == {fitted_mr(16, default_blocking(detect_isa()).mr, choices)}


def test_phase_taps_are_the_taps_that_reach_each_output_phase():
    from kernelwright.tools.lower.microkernels.lowered_convt import phase_taps

    for ksz, s, p, dl in [(3, 2, 1, 1), (4, 3, 2, 2), (5, 2, 0, 2), (2, 4, 0, 1), (7, 3, 3, 1)]:
        first, step, count = phase_taps(ksz, s, p, dl)
        for r in range(s):
            want = [t for t in range(ksz) if (r + p - t * dl) % s == 0]
            got = list(range(first[r], ksz, step)) if first[r] >= 0 else []
            assert got == want, (ksz, s, p, dl, r)
            assert len(want) <= count
