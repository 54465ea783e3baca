"""A closed pool gives back every descriptor it opened: a campaign or a test session opens
hundreds of pools in one process (the clean-clone CI run ran out of select()'s 1024)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kernelwright.config import Settings
from kernelwright.spec import Task
from kernelwright.tools.evaluate import WorkerPool
from kernelwright.tools.lower import lower_task

ROOT = Path(__file__).resolve().parents[3]


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.slow
def test_a_closed_pool_holds_no_descriptor_after_timing(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache",
                        promote_builds=False, min_time_s=1e-3, warmup_calls=0, max_repeats=3)
    task = Task.from_path(ROOT / "examples" / "tasks" / "l1_gelu.py")
    candidate = lower_task(task, "cpp").candidate
    before = _open_descriptors()
    for _ in range(2):
        with WorkerPool(settings) as pool:
            result = pool.evaluate(task, candidate, settings=settings)
        assert result.correct and result.speedup is not None  # timed: the timing arenas exist
    assert _open_descriptors() == before
