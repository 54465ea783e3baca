"""CUDA from the same IR: nvcc compiles it; small programs run correctly on the PTX emulator."""

from __future__ import annotations

import pytest
from lower_helpers import check_lowered, task

from kernelwright.config import Settings
from kernelwright.tools.backends import BackendRegistry
from kernelwright.tools.lower import lower_task


@pytest.mark.requires_nvcc
@pytest.mark.slow
@pytest.mark.parametrize("name", ["layernorm3", "conv_bn", "pool"])
def test_cuda_source_compiles_with_nvcc(name):
    prog = lower_task(task(name), "cuda")
    if name == "layernorm3":  # the cooperative (one block per row) form
        prog = prog.with_params({"g0.strategy": "group", "g0.wg": 64})
        assert "kw_block_reduce" in prog.source
    result = BackendRegistry(Settings()).get("cuda").build(prog.source)
    assert result.ok, result.log


@pytest.mark.requires_nvcc
@pytest.mark.slow
@pytest.mark.parametrize("name", ["relu_chain", "softmax_mid"])
def test_cuda_runs_correctly_on_the_emulator(name):
    status = BackendRegistry(Settings()).get("cuda").status()
    # with nvcc here, our own PTX emulator runs the program when no device does: a broken
    # emulator import must fail this test, not skip it
    assert status.can_run, f"the CUDA backend cannot run here: {status.detail}"
    check_lowered(lower_task(task(name), "cuda"))


def test_a_lowered_module_makes_its_buffers_where_its_inputs_live():
    import torch

    from kernelwright.tools.lower.runtime import _device_of

    # a CUDA module run on a GPU gets CUDA tensors: intermediates and outputs must follow
    assert _device_of((3, torch.empty(2, device="meta"))) == torch.device("meta")
    assert _device_of((None, 1.0)) == torch.device("cpu")
