"""Helpers shared by the harness tests (a uniquely named module, importable from them)."""

from __future__ import annotations

from pathlib import Path

from kernelwright.spec import Candidate, Task

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

# Small and quick, one intra-op thread (timings on a shared 2-core machine stay stable), and a
# memory limit low enough that the huge-allocation crash test hits it.
FAST = dict(seeds=3, min_time_s=0.02, warmup_calls=1, max_repeats=200, worker_threads=1,
            memory_limit_mb=4096, call_timeout_s=60)


def task(name: str) -> Task:
    return Task.from_path(FIXTURES / "tasks" / f"{name}.py")


def candidate(rel: str) -> Candidate:
    """A fixture candidate by relative name (``.txt`` holds sources that are not Python)."""
    path = FIXTURES / f"{rel}.py"
    return Candidate.from_file(path if path.exists() else FIXTURES / f"{rel}.txt")
