"""Fusion legality is decided by the scheduler (``fusion.fusable``), before emission."""

from __future__ import annotations

import pytest
from lower_helpers import check_lowered, task, task_file

from kernelwright.tools.lower import lower_task, program
from kernelwright.tools.lower.backends import codegen_for
from kernelwright.tools.lower.fusion import fusable


@pytest.fixture
def no_emission_splits(monkeypatch):
    """Fail if emission still has to split a group (the fallback after NotFusable)."""
    def refuse(grp):
        raise AssertionError(f"emission split {grp.name}: the scheduler missed it")

    monkeypatch.setattr(program, "split_last", refuse)


def test_scan_read_at_another_index_is_split_by_the_scheduler(no_emission_splits):
    # cumsum(x.flip(1) * m).flip(1): the epilogue reads the scan at the mirrored position
    prog = lower_task(task("scan"), "cpp")
    sched = prog.variants[0].sched
    scans = [g for g in sched.groups if g.kind == "scan"]
    assert any(g.split_off for g in scans)
    real = sched.realized | {i.id for i in prog.variants[0].graph.user_inputs if i is not None}
    assert all(fusable(g, real) for g in sched.groups)
    assert prog.source  # emits without NotFusable
    check_lowered(prog)


def test_size_one_batch_keeps_the_epilogue_fused(no_emission_splits):
    # batch 1: the conv's batch coordinate is an atom pinned to [0, 0] in the emitter and the
    # constant 0 in the epilogue's index map; both are the same element
    prog = lower_task(task("conv_bn"), "sycl")
    for var in prog.variants:
        if var.key.startswith("eval|1,"):
            conv = [g for g in var.sched.groups if g.kind == "conv"]
            assert conv and conv[0].epilogue and not conv[0].split_off
    assert prog.source


def test_codegen_registry_is_case_insensitive_and_names_the_choices():
    assert codegen_for("SYCL").name == "sycl"
    assert "-fno-trapping-math" in codegen_for("Cpp").compile_options
    with pytest.raises(ValueError, match="choose one of: .*cuda"):
        codegen_for("metal")


POOL_OF_SOFTMAX = '''
import torch
from torch.nn import functional as F

class Model(torch.nn.Module):
    def forward(self, x):
        return F.max_pool2d(torch.softmax(x, -1), 2, 2)

def get_inputs():
    return [torch.randn(2, 3, 4, 4)]

def get_init_inputs():
    return []
'''


def test_pool_member_is_checked_under_the_recorder(tmp_path, no_emission_splits):
    # the pool's output has as many elements as the softmax has rows, so the scheduler
    # offers it as the rows group's outer member; the legality check runs the pool's window
    # body, which asks the handler about SIMD (UNetSoftmax of KernelBench level 3 crashed here)
    prog = lower_task(task_file(tmp_path, "pool_of_softmax", POOL_OF_SOFTMAX), "cpp")
    var = prog.variants[0]
    real = var.sched.realized | {i.id for i in var.graph.user_inputs if i is not None}
    assert all(fusable(g, real) for g in var.sched.groups)
    check_lowered(prog)


def test_a_long_recurrence_is_realized_in_pieces_not_recomputed_whole():
    prog = lower_task(task("long_chain"), "cpp")
    var = prog.variants[0]
    pointwise = [g for g in var.sched.groups if g.kind == "pointwise"]
    assert len(pointwise) > 2  # the chain is cut into kernels, each under the limit
    assert len(prog.source) < 400_000
    check_lowered(prog)
