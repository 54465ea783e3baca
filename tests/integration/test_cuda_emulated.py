"""A CUDA candidate gets a verdict from the harness on a machine without a GPU (PTX emulator)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.spec import Candidate, Task
from kernelwright.tools.evaluate import Flag, evaluate

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.requires_nvcc
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
