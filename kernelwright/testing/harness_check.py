"""The harness's own verification ladder and timing loop, run in this process (for tests and
template tuning), on the example tasks.

:func:`kernelwright.evaluate` is the judge: it runs candidates in a sandboxed worker, with
recorded references, clock guards and fresh processes after tampering. This module calls the
same :class:`~kernelwright.tools.evaluate.verify.Verifier` (NaN and large-value poison, input
mutation, fresh output storage, float64 reference on the smallest variant) and the same
:class:`~kernelwright.tools.evaluate.timing.Timer` without the process boundary, so a test
that only needs a verdict does not pay for a worker — and there is still one evaluation path.

Run ``OMP_WAIT_POLICY=PASSIVE`` when timing: torch's spinning OpenMP threads and the SYCL
runtime's TBB workers otherwise slow each other down.
"""

from __future__ import annotations

import time
import types
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from kernelwright.spec import Contract, Task, derive_contract
from kernelwright.spec.result import Level
from kernelwright.tools.evaluate.guards import ThreadGuard, synchronizer
from kernelwright.tools.evaluate.timing import Timer, input_stream
from kernelwright.tools.evaluate.verify import Verifier

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TASKS = sorted(p.stem for p in (EXAMPLES / "tasks").glob("*.py"))


@dataclass(frozen=True)
class Check:
    """The verdict of :func:`check`: correct on every variant, its ladder level, the worst
    absolute error seen, and the harness's message when it is not correct."""

    correct: bool
    level: Level
    max_error: float
    error: str | None


def task_path(name: str) -> Path:
    """The file of example task ``name`` (``examples/tasks/<name>.py``)."""
    return EXAMPLES / "tasks" / f"{name}.py"


@cache
def task_and_contract(name: str) -> tuple[Task, Contract]:
    """Example task ``name`` and its contract, derived once per process."""
    task = Task.from_path(task_path(name))
    return task, derive_contract(task)


def load_source(source: str, name: str = "candidate") -> types.ModuleType:
    """Execute a candidate's source as a fresh module."""
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


def check(task_name: str, source: str, seeds: int = 1) -> Check:
    """Run the harness's verification ladder on ``ModelNew`` of ``source`` in this process."""
    task, contract = task_and_contract(task_name)
    cls = load_source(source).ModelNew
    verifier = Verifier(task.module(), contract, seeds, synchronizer(), ThreadGuard())
    verifier.models(cls, 0)  # construct first: the sync below covers backends it loaded
    verifier.sync = synchronizer()
    verdict = verifier.run(cls)
    errors = [v.max_abs_error for v in verdict.variants if v.max_abs_error is not None]
    return Check(
        correct=verdict.ok,
        level=verdict.level,
        max_error=max(errors, default=0.0),
        error=verdict.error,
    )


def time_pair(task_name: str, source: str, min_time_s: float = 0.2) -> tuple[float, float]:
    """Median ms of reference and candidate on the nominal variant, from the harness's timing
    loop (interleaved calls, fresh inputs, outputs checked every round)."""
    task, contract = task_and_contract(task_name)
    cls = load_source(source).ModelNew
    verifier = Verifier(task.module(), contract, 1, synchronizer(), ThreadGuard())
    models = verifier.models(cls, 0)
    timer = Timer(time.perf_counter, synchronizer())
    inputs = input_stream(verifier.task, contract.nominal, start=1000)
    outcome = timer.run(models.reference, models.candidate, inputs, contract, warmup=2,
                        min_time_s=min_time_s, max_repeats=1000)
    timing = outcome.timing
    return timing.reference_median_s * 1e3, timing.candidate_median_s * 1e3
