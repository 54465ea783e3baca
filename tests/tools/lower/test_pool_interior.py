"""Pooling windows inside the input get their own loop with plain (unclamped) reads on C++;
the border loops keep the clamps. Both must match torch on every window shape."""

from __future__ import annotations

import re

import pytest
from lower_helpers import check_lowered

from kernelwright.spec import Task
from kernelwright.tools.lower import lower_task
from kernelwright.tools.lower.ops_anchor import _interior

TASK = '''
import torch
from torch import nn
from torch.nn import functional as F


class Model(nn.Module):
    def forward(self, x, y, z):
        return (F.max_pool1d(x, 8, 1, 4, 3),                       # dilated, padded
                F.avg_pool1d(x, 5, 2, 2, ceil_mode=True, count_include_pad=False),
                F.max_pool1d(x[..., :6], 6, 1, 3),                  # no interior at all
                F.max_pool2d(y, 3, 2, 1),
                F.avg_pool2d(y, (2, 3), (1, 2), (1, 1)),
                F.max_pool3d(z, 2, 1, 1))


def get_inputs():
    return [torch.randn(2, 3, 37), torch.randn(2, 3, 11, 13), torch.randn(1, 2, 5, 6, 7)]


def get_init_inputs():
    return []
'''


def test_interior_is_the_positions_whose_window_is_inside():
    assert _interior(256, 259, 8, 1, 4, 3) == (4, 238)  # KernelBench's max-pool 1-D
    for size, k, s, p, d in [(37, 5, 2, 2, 1), (11, 3, 2, 1, 1), (9, 4, 3, 0, 2)]:
        out = (size + 2 * p - d * (k - 1) - 1) // s + 1
        inside = [o for o in range(out) if o * s - p >= 0 and o * s - p + (k - 1) * d < size]
        assert _interior(size, out, k, s, p, d) == ((inside[0], inside[-1]) if inside else None)
    assert _interior(6, 7, 6, 1, 3, 1) == (3, 3)
    assert _interior(4, 5, 6, 1, 3, 1) is None


def test_pools_split_their_rows_and_match_torch(tmp_path):
    path = tmp_path / "pools.py"
    path.write_text(TASK)
    prog = lower_task(Task.from_path(path), "cpp")
    check_lowered(prog)
    source = prog.candidate.source
    # the dilated max-pool's rows (24 outputs, windows inside for 4..19): a border loop, the
    # interior loop with plain reads, a border loop with clamped ones
    loops = re.split(r"#pragma omp simd", source)
    interior = [b for b in loops if "for (int j = 4; j < 20; ++j)" in b]
    border = [b for b in loops if "for (int j = 20; j < 24; ++j)" in b]
    assert interior and border
    assert "kw_min(kw_max" not in interior[0].split("extern")[0]
    assert "kw_min(kw_max" in border[0]


UNPADDED = '''
import torch
from torch import nn
from torch.nn import functional as F


class Model(nn.Module):
    def forward(self, x, y, z):
        return (F.avg_pool2d(y, 3),                 # windows end before the last row/column
                F.max_pool2d(y, 2),
                F.avg_pool3d(z, (2, 3, 2), 1),
                F.max_pool1d(x, 4, 3, dilation=2),
                F.avg_pool2d(y, 5, 5, divisor_override=7))


def get_inputs():
    x = torch.randn(2, 3, 37)
    x[0, 1, 5] = float("nan")  # a NaN in a window: max pooling keeps it
    return [x, torch.randn(2, 3, 11, 13), torch.randn(1, 2, 5, 6, 7)]


def get_init_inputs():
    return []
'''


@pytest.mark.parametrize("backend", ["cpp", pytest.param("sycl", marks=pytest.mark.requires_sycl)])
def test_windows_inside_the_input_in_every_dim_read_plainly(tmp_path, backend):
    """Without padding every window lies inside the input in every dim: no clamp, no select
    (on C++ they halved the speed of an 11 x 11 average pool), and on C++ the innermost window
    loop is a simd reduction where no loop around it is one."""
    path = tmp_path / "unpadded.py"
    path.write_text(UNPADDED)
    prog = lower_task(Task.from_path(path), backend)
    check_lowered(prog)
    kernels = prog.candidate.source.split("[EVOLVE_START]")[1]
    assert "kw_min(kw_max" not in kernels and ">= 0)" not in kernels
    if backend == "cpp":
        assert "#pragma omp simd reduction(+:" in kernels


UNROLLED = '''
import torch
from torch import nn
from torch.nn import functional as F


class Model(nn.Module):
    def forward(self, y, z, w):
        return (F.max_pool2d(torch.tanh(y) * 2, 4),         # 16 taps, the l2_85 form
                F.max_pool3d(torch.sigmoid(z), 3, 1, 1),    # 27 taps, padded: clamped reads
                F.avg_pool2d(torch.relu(w), 11, 1))         # 121 taps: two steps


def get_inputs():
    y = torch.randn(2, 3, 18, 70)
    y[1, 2, 5, 6] = float("nan")  # a NaN in a window: max pooling keeps it
    return [y, torch.randn(1, 2, 5, 6, 37), torch.randn(1, 2, 14, 45)]


def get_init_inputs():
    return []
'''


def test_small_windows_inside_a_simd_loop_are_unrolled_whole(tmp_path):
    """g++ vectorises a loop over outputs only around one inner loop: a 2-D or 3-D window of
    at most WINDOW_UNROLL_MAX taps inside the simd loop is unrolled whole (every window loop
    carries the pragma); a larger unpadded one is taken in two steps (test_separable_pools),
    the first a column of 11 taps, unrolled; all match torch."""
    from kernelwright.tools.lower.ops_anchor import WINDOW_UNROLL_MAX

    path = tmp_path / "unrolled.py"
    path.write_text(UNROLLED)
    prog = lower_task(Task.from_path(path), "cpp")
    check_lowered(prog)
    kernels = prog.candidate.source.split("[EVOLVE_START]")[1]
    pragmas = re.findall(r"#pragma GCC unroll (\d+)", kernels)
    assert 11 * 11 > WINDOW_UNROLL_MAX >= 27
    assert pragmas.count("4") >= 2 and pragmas.count("3") >= 3  # both loops, all three
    assert "11" in pragmas and "121" not in pragmas


SEPARABLE = '''
import torch
from torch import nn
from torch.nn import functional as F


class Model(nn.Module):
    def forward(self, x, v):
        return (F.avg_pool2d(x, 11),                           # 121 taps, no overlap
                F.max_pool2d(x, 9, 2, dilation=2),             # 81, overlapping, dilated
                F.avg_pool2d(x, (9, 8), 3, divisor_override=5),
                F.max_pool3d(v, (4, 4, 5), (2, 3, 1)),         # 80 taps over three dims
                F.avg_pool2d(x, 11, 1, 5),                     # padded: one step
                F.avg_pool2d(x.half(), 11).float())            # float partial sums


def get_inputs():
    x = torch.randn(2, 3, 40, 37)
    x[1, 0, 20, 20] = float("nan")  # max keeps it, through both steps
    return [x, torch.randn(1, 2, 9, 12, 17)]


def get_init_inputs():
    return []
'''


@pytest.mark.parametrize("backend", ["cpp", pytest.param("sycl", marks=pytest.mark.requires_sycl)])
def test_separable_pools_take_two_steps_and_match_torch(tmp_path, backend):
    """An unpadded pool whose window is too large to unroll reduces its leading window dims
    first into a realized buffer, then the last dim's window over it: sums, maxima (a NaN
    kept), a divisor override, overlap, dilation, three dims; a padded one stays one step."""
    from kernelwright.tools.lower.ops_anchor import _separable

    path = tmp_path / "separable.py"
    path.write_text(SEPARABLE)
    prog = lower_task(Task.from_path(path), backend)
    check_lowered(prog)
    groups = prog.variants[0].sched.groups
    firsts = [g for g in groups if getattr(g.main[0], "realize", False)]
    assert len(firsts) == 5  # five pools in two steps, the padded one in one
    assert [str(g.main[0].dtype) for g in firsts].count("torch.float32") == 5
    assert _separable((40, 37), (3, 3), (11, 11), (11, 11), (0, 0), (1, 1))
    assert not _separable((40, 37), (40, 37), (11, 11), (1, 1), (5, 5), (1, 1))  # padded
    assert not _separable((40, 37), (4, 4), (11, 11), (11, 11), (0, 0), (1, 1))  # ceil window
    assert not _separable((40, 37), (5, 5), (8, 8), (8, 8), (0, 0), (1, 1))  # 64: unrolled
