"""Kernels that differ only in their buffers are emitted once and launched for each."""

from __future__ import annotations

import re

import pytest
from lower_helpers import check_lowered, plan_steps, task_file

from kernelwright.agents.variants import view_of
from kernelwright.tools.lower import lower_task

STACK = '''
import torch
from torch import nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.steps = nn.ModuleList(nn.Linear(32, 32) for _ in range(3))
        self.head = nn.Linear(32, 16)

    def forward(self, x):
        for step in self.steps:
            x = torch.tanh(step(x))
        return self.head(x)

def get_inputs():
    return [torch.randn(24, 32)]

def get_init_inputs():
    return []
'''


@pytest.mark.parametrize("backend", ["cpp", pytest.param("sycl", marks=pytest.mark.requires_sycl)])
def test_alike_layers_share_one_kernel_in_every_variant(tmp_path, backend):
    prog = lower_task(task_file(tmp_path, "stack", STACK), backend)
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
