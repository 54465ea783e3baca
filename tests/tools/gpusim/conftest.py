"""Fixtures for the PTX emulator tests: the test kernels compiled once per session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.fixture(scope="session")
def gpusim_settings(tmp_path_factory):
    """Settings whose cache_dir (the nvcc PTX cache) is one temp dir for the whole session."""
    from kernelwright.config import Settings

    return Settings(cache_dir=tmp_path_factory.mktemp("kwcache"))


@pytest.fixture(scope="session")
def emu_ptx(gpusim_settings) -> str:
    """PTX of kernels_emu.cu (nvcc -arch=sm_90 -ptx), compiled once per session."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    from kernelwright.tools.gpusim.workloads._nvcc import compile_ptx

    return compile_ptx((HERE / "kernels_emu.cu").read_text(), gpusim_settings)
