"""Fixtures for the PTX emulator tests: the test kernels compiled once per session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.fixture(scope="session")
def emu_ptx(tmp_path_factory) -> str:
    """PTX of kernels_emu.cu (nvcc -arch=sm_90 -ptx), cached in a session temp dir."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    from kernelwright.config import Settings
    from kernelwright.tools.gpusim.workloads._nvcc import compile_ptx

    settings = Settings(cache_dir=tmp_path_factory.mktemp("kwcache"))
    return compile_ptx((HERE / "kernels_emu.cu").read_text(), settings=settings)
