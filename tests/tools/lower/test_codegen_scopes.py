"""A register bound inside a block is forgotten when the block closes: a later block reading
the same element computes it again. Regression: a batch-1 linear layer on SYCL (a GEMM tile
whose clamped rows all read row 0) named the first row's epilogue value in the other rows'
blocks, and the device compiler refused the kernel."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from lower_helpers import check_lowered

from kernelwright.spec import Task, derive_contract
from kernelwright.spec.contract import ImplementationSpace
from kernelwright.tools.lower import lower_task
from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dialect import SYCL
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.ir import Node

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "tasks"


def test_bindings_made_in_a_block_end_with_it():
    k = KernelCtx(SYCL, {})
    node = Node(name="n", shape=(4,), dtype=torch.float32)
    outer = k.let("x0[0]", "float")
    key = [Ix.c(0)]
    with k.block("if (a)"):
        inner = k.let("x0[1] * 2.0f", "float")
        k.bind(node, key, inner)
        assert k.lookup(node, key) == inner
    assert k.lookup(node, key) is None  # out of scope now
    k.bind(node, key, outer)  # declared outside every block: stays bound
    with k.block("if (b)"):
        pass
    assert k.lookup(node, key) == outer


@pytest.mark.requires_sycl
def test_a_batch_1_linear_layer_builds_and_matches_on_sycl():
    task = Task.from_path(CORPUS / "l2_linear_sigmoid_gate_batch1.py")
    contract = derive_contract(task).narrowed([ImplementationSpace.CUSTOM_KERNEL])
    check_lowered(lower_task(task, "sycl", contract=contract))
