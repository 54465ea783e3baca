"""A CUDA candidate gets a verdict from the harness on a machine without a GPU (PTX emulator)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.spec import Candidate, Task
from kernelwright.tools.evaluate import Flag, evaluate

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.requires_nvcc
@pytest.mark.slow
def test_cuda_example_is_correct_on_the_emulator_and_not_timed():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present: the candidate runs on it, not on the emulator")
    task = Task.from_path(ROOT / "examples" / "tasks" / "l1_gelu.py")
    candidate = Candidate.from_file(ROOT / "examples" / "candidates" / "l1_gelu_cuda.py")
    assert candidate.backend == "cuda"
    result = evaluate(task, candidate)
    assert result.correct, result.error
    assert Flag.EMULATED in result.flags
    assert result.timing is None  # an emulated kernel's time says nothing about its speed
    assert len(result.variants) >= 3 and all(v.ok for v in result.variants)


@pytest.mark.requires_nvcc
@pytest.mark.requires_sycl
@pytest.mark.slow
def test_a_sycl_candidate_after_a_cuda_one_in_the_same_worker_is_timed():
    """The 'emulated' verdict belongs to the candidate that used the emulator, not the worker."""
    import torch

    from kernelwright.tools.evaluate import WorkerPool

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    task = Task.from_path(ROOT / "examples" / "tasks" / "l1_gelu.py")
    cuda = Candidate.from_file(ROOT / "examples" / "candidates" / "l1_gelu_cuda.py")
    sycl = Candidate.from_file(ROOT / "examples" / "candidates" / "l1_gelu_naive_sycl.py")
    with WorkerPool() as pool:
        first = evaluate(task, cuda, pool=pool)
        second = evaluate(task, sycl, pool=pool)
    assert Flag.EMULATED in first.flags
    assert second.correct and Flag.EMULATED not in second.flags and second.timing is not None
