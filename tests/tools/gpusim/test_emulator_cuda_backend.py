"""The CUDA backend without a GPU: cuda.load_inline kernels run on the PTX emulator."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.requires_nvcc
ROOT = Path(__file__).resolve().parents[3]

VADD = r"""
extern "C" __global__ void vadd(const float* x, const float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] + y[i];
}
"""


@pytest.fixture
def cuda_on_emulator(tmp_path, monkeypatch):
    from kernelwright.tools.backends import _cuda_run, cuda

    if _cuda_run.cuda_device() is not None:
        pytest.skip("a CUDA device is present: kernels would run through CuPy")
    monkeypatch.setenv("KERNELWRIGHT_CACHE_DIR", str(tmp_path))
    return cuda


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_load_inline_vadd_on_cpu_tensors(cuda_on_emulator):
    mod = cuda_on_emulator.load_inline(VADD)
    n = 1000
    x, y = torch.randn(n), torch.randn(n)
    out = torch.zeros(n)
    stats = mod.vadd(x, y, out, n, grid=((n + 255) // 256,), block=(256,))
    torch.testing.assert_close(out, x + y)
    assert stats.thread_instructions > n  # the emulator's LaunchStats come back


def test_gelu_candidate_matches_the_task_reference(cuda_on_emulator):
    task = _load(ROOT / "examples" / "tasks" / "l1_gelu.py", "l1_gelu_task")
    cand = _load(ROOT / "examples" / "candidates" / "l1_gelu_cuda.py", "l1_gelu_cuda")
    x = torch.randn(8, 1001)  # 8008 elements: float4 body plus a scalar tail
    y = cand.ModelNew()(x)
    torch.testing.assert_close(y, task.Model()(x), rtol=1e-5, atol=1e-6)
