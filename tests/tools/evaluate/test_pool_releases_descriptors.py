"""A closed pool gives back every descriptor it opened: a campaign or a test session opens
hundreds of pools in one process (the clean-clone CI run ran out of select()'s 1024)."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from kernelwright.config import Settings
from kernelwright.spec import Task
from kernelwright.tools.evaluate import WorkerPool
from kernelwright.tools.lower import lower_task

ROOT = Path(__file__).resolve().parents[3]


def _open_descriptors() -> set[tuple[str, str]]:
    """Each open descriptor as (number, what it points at), after collecting garbage: an object
    of an earlier test that the collector frees mid-test closes a descriptor nobody here opened."""
    gc.collect()
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            found.add((fd, os.readlink(f"/proc/self/fd/{fd}")))
        except OSError:  # the listing's own descriptor, closed by now
            continue
    return found


@pytest.mark.slow
def test_a_closed_pool_holds_no_descriptor_after_timing(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache",
                        promote_builds=False, min_time_s=1e-3, warmup_calls=0, max_repeats=3)
    task = Task.from_path(ROOT / "examples" / "tasks" / "l1_gelu.py")
    candidate = lower_task(task, "cpp").candidate

    def one_pool() -> None:
        with WorkerPool(settings) as pool:
            result = pool.evaluate(task, candidate, settings=settings)
        assert result.correct and result.speedup is not None  # timed: the timing arenas exist

    one_pool()  # the first pool may open what the process keeps for good (the build cache's lock)
    before = _open_descriptors()
    for _ in range(2):
        one_pool()
    left_open = _open_descriptors() - before
    assert not left_open, f"descriptors the closed pools left open: {sorted(left_open)}"
