"""Quick verdicts from the real harness on the example tasks (for tests and template tuning).

There is one evaluation path: this module sends candidates through the sandboxed harness
(:class:`~kernelwright.tools.evaluate.WorkerPool`, warm per task) with settings that ask for a
verdict quickly — one seed per variant (the harness still checks at least three), and a short
timing loop. Only :func:`load_source` runs code in this process, for tests that inspect a
rendered module's Python side.

Example:
    >>> with HarnessCheck(quick_settings(cache_dir=tmp)) as harness:  # doctest: +SKIP
    ...     harness.check("l1_gelu", source).correct
    True
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

from kernelwright.config import Settings
from kernelwright.spec import Candidate, EvalResult, Task, guess_backend
from kernelwright.tools.evaluate import WorkerPool

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TASKS = sorted(p.stem for p in (EXAMPLES / "tasks").glob("*.py"))
# A session-long test pool: promoting every source it built at close would recompile them all.
QUICK = {"seeds": 1, "min_time_s": 0.01, "max_repeats": 3, "warmup_calls": 0,
         "promote_builds": False}


def task_path(name: str) -> Path:
    """The file of example task ``name`` (``examples/tasks/<name>.py``)."""
    return EXAMPLES / "tasks" / f"{name}.py"


def quick_settings(**overrides: Any) -> Settings:
    """Settings for a verdict in seconds: :data:`QUICK` plus ``overrides``."""
    return Settings(**{**QUICK, **overrides})


def load_source(source: str, name: str = "candidate") -> types.ModuleType:
    """Execute a candidate's source as a fresh module in this process (no verdict)."""
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


class HarnessCheck:
    """The harness with one warm pool: :meth:`check` for a verdict, :meth:`time_pair` for
    reference and candidate medians."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.pool = WorkerPool(settings)

    def check(self, task_name: str, source: str) -> EvalResult:
        """The harness's verdict on ``source`` for example task ``task_name``."""
        candidate = Candidate(source=source, backend=guess_backend(source))
        return self.pool.evaluate(Task.from_path(task_path(task_name)), candidate)

    def time_pair(self, task_name: str, source: str, min_time_s: float = 0.2):
        """Median ms of reference and candidate from the harness's timing loop, or ``None``
        when the candidate is not correct."""
        candidate = Candidate(source=source, backend=guess_backend(source))
        settings = self.settings.model_copy(update={"min_time_s": min_time_s,
                                                    "max_repeats": 1000})
        result = self.pool.evaluate(Task.from_path(task_path(task_name)), candidate,
                                    settings=settings)
        if not result.correct or result.timing is None:
            return None
        return result.timing.reference_median_s * 1e3, result.timing.candidate_median_s * 1e3

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> HarnessCheck:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"HarnessCheck({self.pool!r})"
