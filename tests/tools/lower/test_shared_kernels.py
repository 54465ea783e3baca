"""Kernels that differ only in their buffers are emitted once and launched for each."""

from __future__ import annotations

import re

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


def test_alike_layers_share_one_kernel_in_every_variant(tmp_path):
    prog = lower_task(task_file(tmp_path, "stack", STACK), "cpp")
    defined = re.findall(r'extern "C" void (k\d+_\w+)\(', prog.source)
    steps = plan_steps(prog)
    launched = [s["kernel"] for s in steps if "kernel" in s]
    assert len(launched) == 4 and len(set(launched)) == 2  # three layers, one head
    assert set(launched) <= set(defined)
    variants = len(prog.variants)
    assert len(defined) == 2 * variants  # each variant: the layer kernel and the head's
    assert len({tuple(s["args"]) for s in steps if s["kernel"] == launched[0]}) == 3
    assert "launch the code of an identical one" in prog.describe()
    check_lowered(prog)
    view = view_of(prog.candidate.source)  # the coder's view still aligns the variants
    assert view is not None and view.variants == variants
    assert view.module(view.text).split() == prog.candidate.source.split()  # writes it back
