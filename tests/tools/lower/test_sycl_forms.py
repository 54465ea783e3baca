"""SYCL-only kernel forms. Scans along the last dim run as sub-group tiles (one line per
sub-group, a vector of neighbouring elements at a time); both forms match torch on ragged
lines, fused bodies and epilogues, products and integers, and a scan along another dim keeps
the line form. Elementwise kernels run work-groups inside one row where a trailing block of
the shape allows it, or runs of neighbouring elements over the flat index; every form
matches torch."""

from __future__ import annotations

import pytest
from lower_helpers import check_lowered, task_file

from kernelwright.tools.lower import lower_task
from kernelwright.tools.lower.emit.pointwise import padded_row_split

pytestmark = pytest.mark.requires_sycl

SCANS = '''
import torch
from torch import nn

class Model(nn.Module):
    def forward(self, x, n):
        return (torch.relu(torch.cumsum(2 * x + 1, dim=-1)) - 3, torch.cumprod(1 + x / 64, -1),
                torch.cumsum(n, -1), torch.cumsum(x, 0))

def get_inputs():
    return [torch.randn(5, 1000), torch.randint(-9, 9, (5, 1000))]

def get_init_inputs():
    return []
'''


def test_both_scan_forms_match_torch(tmp_path):
    prog = lower_task(task_file(tmp_path, "scans", SCANS), "sycl")
    tiled = prog.source.count("inclusive_scan_over_group")
    assert tiled == 3 * len(prog.variants), "the three last-dim scans of every signature"
    check_lowered(prog)
    forms = {k for k, v in prog.params.items() if k.endswith(".form") and v == "tiles"}
    assert len(forms) == 3
    lines = prog.with_params({k: "lines" for k in forms})
    assert "inclusive_scan_over_group" not in lines.source
    check_lowered(lines)


CHANNELS = '''
import torch
from torch import nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(1, 5, 1, 1))
        self.shift = nn.Parameter(torch.randn(5, 1, 1))

    def forward(self, x, y):
        return torch.sigmoid(x * self.scale + self.shift), y * self.scale[:, :, :, :1] + 1

def get_inputs():
    return [torch.randn(3, 5, 8, 32), torch.randn(3, 5, 7, 9)]

def get_init_inputs():
    return []
'''


@pytest.mark.parametrize("wg", [64, 128, 512])
def test_elementwise_work_groups_inside_rows_match_torch(tmp_path, wg):
    prog = lower_task(task_file(tmp_path, "channels", CHANNELS), "sycl")
    groups = {k.split(".")[0] for k in prog.params if k.endswith(".wg")}
    prog = prog.with_params({f"{g}.wg": wg for g in groups})
    # 8 x 32 rows hold whole work-groups of 64 and 128, none of 512; 7 x 9 rows none
    assert ("kw_g / " in prog.source) == (wg in (64, 128))
    check_lowered(prog)


@pytest.mark.parametrize("ipw", [2, 8])
def test_elementwise_runs_of_neighbours_per_work_item_match_torch(tmp_path, ipw):
    """ipw elements per work-item, ``wg`` apart: each step's loads are contiguous across the
    lanes; 3 x 5 x 7 x 9 = 945 leaves a guarded tail in the last work-group."""
    prog = lower_task(task_file(tmp_path, "channels", CHANNELS), "sycl")
    groups = {k.split(".")[0] for k in prog.params if k.endswith(".ipw")}
    prog = prog.with_params({f"{g}.{p}": v for g in groups for p, v in (("ipw", ipw),
                                                                        ("wg", 64))})
    source = prog.source
    assert f"(kw_g * {ipw} + e) * 64 + kw_l" in source and "if (f < 945)" in source
    assert "u * " not in source
    check_lowered(prog)


def test_padded_row_split_idles_at_most_an_eighth_of_the_lanes():
    assert padded_row_split((64, 192, 243), 256) == (64 * 192, 243)  # 13 idle lanes of 256
    assert padded_row_split((4, 30, 30), 256) is None  # 30 -> 256: too many
    assert padded_row_split((4, 16, 30, 900), 256) is None  # the last dim alone: 1024
    assert padded_row_split((4, 16, 30, 1000), 256) == (4 * 16 * 30, 1000)
    assert padded_row_split((1000,), 64) is None  # the leading dim is never a row
    assert padded_row_split((2, 0, 5), 64) is None


POOL_ROWS = '''
import torch
from torch import nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size=5, stride=1, padding=2, dilation=3)
        self.bias = nn.Parameter(torch.randn(291))

    def forward(self, x):
        return self.pool(x), torch.tanh(x[..., :291] + self.bias)

def get_inputs():
    return [torch.randn(3, 7, 299)]

def get_init_inputs():
    return []
'''


@pytest.mark.parametrize("wg", [64, 256])
def test_elementwise_rows_padded_to_whole_work_groups_match_torch(tmp_path, wg):
    """Rows of 291 (pool output) and 291 (sliced, with a per-column bias): padded to 320
    for work-groups of 64 (five per row) or 512 for 256 (too many idle lanes: runs)."""
    prog = lower_task(task_file(tmp_path, "pool_rows", POOL_ROWS), "sycl")
    groups = {k.split(".")[0] for k in prog.params if k.endswith(".wg")}
    prog = prog.with_params({f"{g}.wg": wg for g in groups})
    padded = "kw_g % 5;" in prog.source and " * 64 + kw_l;" in prog.source
    assert padded == (" < 291) {" in prog.source)
    assert padded == (wg == 64)
    check_lowered(prog)
