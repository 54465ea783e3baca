"""Every family lowers to kernels that match the reference, on C++/OpenMP and SYCL."""

from __future__ import annotations

import pytest
from lower_helpers import check_lowered, task

from kernelwright.tools.lower import lower_task

FAST = ["relu_chain", "softmax_mid", "layernorm3", "gemm_epi"]
SLOW = ["reduce_multi", "scan", "pool", "bmm", "conv_bn", "convt", "groupnorm", "losses",
        "layout"]


@pytest.mark.parametrize("name", FAST)
@pytest.mark.slow
def test_family_cpp(name):
    prog = lower_task(task(name), "cpp")
    check_lowered(prog)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_family_cpp_slow(name):
    check_lowered(lower_task(task(name), "cpp"))


@pytest.mark.requires_sycl
@pytest.mark.parametrize("name", FAST[:2])
def test_family_sycl(name):
    check_lowered(lower_task(task(name), "sycl"))


@pytest.mark.slow
@pytest.mark.requires_sycl
@pytest.mark.parametrize("name", FAST[2:] + SLOW)
def test_family_sycl_slow(name):
    check_lowered(lower_task(task(name), "sycl"))


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["cpp", pytest.param("sycl", marks=pytest.mark.requires_sycl)])
def test_training_mode_batch_norm_uses_batch_statistics(backend):
    prog = lower_task(task("conv_bn"), backend)
    assert any(v.key.startswith("train|") for v in prog.variants)
    check_lowered(prog, training=True)
    check_lowered(prog, training=False)


def test_softmax_is_one_fused_kernel_per_signature():
    prog = lower_task(task("softmax_mid"), "cpp")
    for var in prog.variants:
        assert [g.kind for g in var.sched.groups] == ["rows"]
        assert len(var.sched.groups[0].main) == 2  # max and sum in one row group


def test_gemm_bias_activation_is_one_kernel():
    prog = lower_task(task("gemm_epi"), "cpp")
    kinds = [g.kind for g in prog.variants[0].sched.groups]
    assert kinds == ["gemm"]
    assert len(prog.variants[0].sched.groups[0].epilogue) == 1


def test_half_types_are_stored_in_16_bits_and_computed_in_float():
    prog = lower_task(task("half"), "cpp")
    assert "kw_h2f" in prog.source and "kw_f2b" in prog.source
    check_lowered(prog, tol=1e-1)
