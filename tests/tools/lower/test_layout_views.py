"""Layout operators lowered as index maps read the elements torch's views read."""

from __future__ import annotations

import pytest
from lower_helpers import check_lowered, task_file

from kernelwright.tools.lower import lower_task

UNFOLD = '''
import torch

class Model(torch.nn.Module):
    def forward(self, x):
        return {expr}

def get_inputs():
    return [torch.randn(2, 3, 12, 10)]

def get_init_inputs():
    return []
'''


@pytest.mark.parametrize("expr", [
    # ViT patches: non-overlapping windows of both spatial dims, then flattened
    "x.unfold(2, 4, 4).unfold(3, 5, 5).reshape(2, -1, 20) * 2",
    # overlapping windows, a last window that leaves a tail, a negative dim
    "x.unfold(-1, 3, 2).sum(-1)",
    "torch.relu(x.unfold(1, 2, 1))",
], ids=["patches", "overlapping", "channels"])
def test_unfold_reads_each_window(tmp_path, expr):
    prog = lower_task(task_file(tmp_path, "unfold", UNFOLD.format(expr=expr)), "cpp")
    assert "unfold" in prog.variants[0].graph.ops
    check_lowered(prog)
