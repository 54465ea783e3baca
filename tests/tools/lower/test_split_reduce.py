"""Reductions with few long rows are split into partial rows on the work-group backends, and
cooperative row loops run the same trip count on every work-item."""

from __future__ import annotations

import math
import re

import pytest
import torch
from lower_helpers import check_lowered, task_file

from kernelwright.tools.lower import lower_task
from kernelwright.tools.lower.ir import Reduction
from kernelwright.tools.lower.ops_reduce import FLOAT_RUN
from kernelwright.tools.lower.split_reduce import (
    MIN_NARROW,
    TARGET_ROWS,
    _choose_cut,
    _eligible,
)

FULL = '''
import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x, y, m):
        return (x / torch.norm(x, p="fro"),            # a sum of squares, then x / norm
                y.amax(dim=(0, 2), keepdim=True),      # 5 rows of 7 x 4099 (a prime)
                y.sum(dim=(0, 2)),
                torch.prod(1.0 + y[:, :, :1024] * 1e-4),
                (x > 0.9).any(), (m != 0).all(),
                x.sum(dim=-1))                         # many short rows: not split


def get_inputs():
    return [torch.rand(6, 16, 64, 67), torch.randn(7, 5, 4099), torch.ones(3, 40000)]


def get_init_inputs():
    return []
'''


@pytest.mark.parametrize("backend", ["sycl", "cpp"])
def test_full_reductions_split_into_partial_rows_and_match_torch(tmp_path, backend):
    prog = lower_task(task_file(tmp_path, "full", FULL), backend)
    check_lowered(prog, tol=2e-4)
    var = prog.variants[0]
    parts = [n for n in var.graph.nodes if isinstance(n, Reduction) and n.name.endswith("_part")]
    if backend == "cpp":  # one thread per row, OpenMP reductions over all threads: no split
        assert not parts and not var.notes
        return
    # the norm, amax, sum, prod, any and all: each split; x.sum(-1) has 6144 rows
    assert len(parts) == 6, [n.name for n in parts]
    assert len(var.notes) == 6 and all("partial rows" in n for n in var.notes)
    assert all(n in prog.describe() for n in var.notes)  # the candidate's header, the plan
    for p in parts:
        assert math.prod(p.shape) >= 7 and p.red_numel >= MIN_NARROW
        if p.op in ("sum", "prod"):  # float chunks up to 4096 floats, partials in double
            assert p.dtype == torch.float64
            narrow = p.red_numel <= FLOAT_RUN
            assert p.acc_dtype == (torch.float32 if narrow else torch.float64), p.name
    assert any(p.acc_dtype == torch.float32 and p.op == "sum" for p in parts)


SMALL = '''
import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x, y):
        return x / torch.norm(x, p="fro"), y.amax(dim=(0, 2), keepdim=True)


def get_inputs():
    return [torch.rand(4, 4100), torch.randn(3, 2, 4099)]


def get_init_inputs():
    return []
'''


@pytest.mark.requires_nvcc
def test_cuda_runs_the_split_reductions_correctly(tmp_path):
    """CUDA takes the same rewrite (a block per row); without a GPU this runs on the PTX
    emulator, so the rows are small."""
    prog = lower_task(task_file(tmp_path, "small", SMALL), "cuda")
    assert len(prog.variants[0].notes) == 2  # 4 partial rows of 4100, 3 of 4099 (a prime)
    check_lowered(prog, tol=2e-4)


def _sum(red, outer, op="sum"):
    shape = (outer,) + red
    n = math.prod(red)
    return Reduction((outer,), torch.float32, [], op=op, src_shape=shape,
                     red_dims=tuple(range(1, len(shape))), body=lambda k, i: "0",
                     acc_dtype=torch.float64 if n > FLOAT_RUN and op == "sum" else torch.float32)


@pytest.mark.parametrize("red,outer,op,want", [
    ((56, 32, 32, 64), 1, "sum", (1, 16)),   # 56 x 16 chunks of 4096 floats, summed in float
    ((3, 1000000), 1, "max", (1, 25)),       # 75 chunks of 40000: the fewest past 64
    ((7, 4099), 5, "sum", (0, 7)),           # 4099 is prime: 35 rows, the most it can give
    ((5 * 4099,), 1, "sum", (0, 5)),
])
def test_the_cut_takes_whole_leading_dims_then_a_divisor(red, outer, op, want):
    assert _choose_cut(_sum(red, outer, op)) == want


def test_rows_enough_or_short_are_not_split():
    assert not _eligible(_sum((4096,), 1))             # short
    assert not _eligible(_sum((100000,), TARGET_ROWS))  # enough rows already
    assert _eligible(_sum((100000,), TARGET_ROWS - 1))
    assert _choose_cut(_sum((40009,), 1)) is None      # prime: no chunk at all


ROWS = '''
import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1), x.sum(dim=-1)


def get_inputs():
    return [torch.randn(37, 1000)]


def get_init_inputs():
    return []
'''


@pytest.mark.parametrize("params", [{"strategy": "subgroup", "sg": 16, "rpg": 4},
                                    {"strategy": "group", "wg": 64}])
def test_cooperative_rows_loop_the_same_count_on_every_work_item(tmp_path, params):
    """1000 = 62 x 16 + 8 and 15 x 64 + 40: a uniform main loop, then a guarded tail."""
    prog = lower_task(task_file(tmp_path, "rows", ROWS), "sycl")
    prog = prog.with_params({**prog.params, **{f"g0.{k}": v for k, v in params.items()}})
    check_lowered(prog)
    source = prog.candidate.source
    assert not re.search(r"for \(int r\d+ = l;", source)  # no loop starting at the lane
    wg = params.get("sg", params.get("wg"))
    # written with the work-group size, so an edit of the launch size stays correct
    assert re.search(rf"for \(int j\d+ = 0; j\d+ < 1000 / {wg} \* {wg}; j\d+ \+= {wg}\)", source)
    assert f"if (1000 / {wg} * {wg} + l < 1000)" in source
