"""A float scan is as precise as torch's: the running value is carried in double.

Regression: a 4001-long float32 cumsum accumulated in float was 3e-4 from the exact prefix sums
(torch's CPU cumsum, which accumulates in double: 8e-6), failing the harness's atol of 1e-4
(corpus task scan_cumsum_last).
"""

from __future__ import annotations

import pytest
import torch
from lower_helpers import task

from kernelwright.testing.harness_check import load_source
from kernelwright.tools.lower import lower_task


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["cpp", pytest.param("sycl", marks=pytest.mark.requires_sycl)])
def test_long_float_scans_stay_within_torchs_error_of_the_exact_result(backend):
    """On SYCL a 4001-long line is 250 sub-group tiles and a ragged one."""
    module = load_source(lower_task(task("scan_long"), backend).candidate.source)
    torch.manual_seed(0)
    x = torch.randn(7, 4001)
    got_sum, got_prod = module.ModelNew()(x)
    exact_sum = torch.cumsum(x.double(), -1)
    exact_prod = torch.cumprod(1 + x.double() / 64, -1)
    torch_sum_err = float((torch.cumsum(x, -1).double() - exact_sum).abs().max())
    assert float((got_sum.double() - exact_sum).abs().max()) <= 2 * torch_sum_err
    torch_prod_err = float((torch.cumprod(1 + x / 64, -1).double() - exact_prod).abs().max())
    assert float((got_prod.double() - exact_prod).abs().max()) <= 2 * torch_prod_err + 1e-7
