"""Kernels that differ only in their buffers are emitted once and launched for each."""

from __future__ import annotations

import re

import pytest
from lower_helpers import check_lowered, plan_steps, task

from kernelwright.agents.variants import view_of
from kernelwright.tools.lower import lower_task


@pytest.mark.parametrize("backend", ["cpp", pytest.param("sycl", marks=pytest.mark.requires_sycl)])
def test_alike_layers_share_one_kernel_in_every_variant(backend):
    prog = lower_task(task("alike_layers"), backend)
    defined = re.findall(r"\bvoid (k\d+_\w+)\(", prog.source)
    launched = [s["kernel"] for s in plan_steps(prog) if "kernel" in s]
    # three alike layers (each one kernel, or a GEMM and its epilogue's), then the head
    assert len(set(launched)) <= len(launched) - 2
    assert set(launched) <= set(defined)
    assert len(defined) == len(set(launched)) * len(prog.variants)
    assert "launch the code of an identical one" in prog.describe()
    check_lowered(prog)
    if backend == "cpp":  # the coder's view still aligns the variants (this model's SYCL
        # variants differ beyond their integers: it has no view, shared or not)
        view = view_of(prog.candidate.source)
        assert view is not None and view.variants == len(prog.variants)
        assert view.module(view.text).split() == prog.candidate.source.split()
