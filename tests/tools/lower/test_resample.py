"""Upsampling (nearest, linear, bilinear, bicubic, trilinear) lowers through torch's own
decompositions into index maps and blends, and matches the reference."""

from __future__ import annotations

import pytest
from lower_helpers import check_lowered, task

from kernelwright.tools.lower import lower_task


@pytest.mark.slow
def test_resample_cpp():
    check_lowered(lower_task(task("resample"), "cpp"))


@pytest.mark.slow
@pytest.mark.requires_sycl
def test_resample_sycl():
    check_lowered(lower_task(task("resample"), "sycl"))
