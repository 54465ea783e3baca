"""kernelwright: a team of agents that makes GPU kernels faster, with honest numbers.

The small public API (heavy modules are imported on first use):

    load_task(path)                        -> Task
    evaluate(task, candidate, settings=..) -> EvalResult
    optimize(task_path, settings=..)       -> RunReport
    resume(run_id, settings=..)            -> RunReport

``settings`` defaults to ``Settings()`` (flags' defaults and ``KERNELWRIGHT_*`` env vars) here,
at the boundary, and is passed down explicitly from here on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["evaluate", "load_task", "optimize", "resume"]

if TYPE_CHECKING:
    from kernelwright.config import Settings
    from kernelwright.graphs.runner import RunReport
    from kernelwright.spec import EvalResult, Task


def _settings(settings: Settings | None) -> Settings:
    from kernelwright.config import Settings

    return settings if settings is not None else Settings()


def load_task(path: Any) -> Task:
    """Load a KernelBench-format task file (raises ``TaskError`` naming problem and fix)."""
    from kernelwright.spec import Task

    return Task.from_path(path)


def evaluate(
    task: Any, candidate: Any, settings: Settings | None = None, **kwargs: Any
) -> EvalResult:
    """Verify and time ``candidate`` (a ``Candidate`` or its source) against ``task`` (a
    ``Task`` or its path) in a sandboxed worker; see ``tools.evaluate.evaluate``."""
    from kernelwright.tools.evaluate import evaluate as _evaluate

    return _evaluate(task, candidate, settings=_settings(settings), **kwargs)


def optimize(task_path: Any, settings: Settings | None = None, **kwargs: Any) -> RunReport:
    """Run the optimisation loop on a task (offline team, or the LLM team when
    ``settings.llm.model`` is set); see ``graphs.runner.start_run``."""
    from kernelwright.graphs.runner import start_run

    return start_run(task_path, _settings(settings), **kwargs)


def resume(run_id: str, settings: Settings | None = None, **kwargs: Any) -> RunReport:
    """Continue run ``run_id`` from its last checkpoint; see ``graphs.runner.resume_run``."""
    from kernelwright.graphs.runner import resume_run

    return resume_run(run_id, _settings(settings), **kwargs)
