"""kernelwright: a team of agents that makes GPU kernels faster, with honest numbers.

The small public API (heavy modules are imported on first use):

    load_task(path)                   -> Task
    evaluate(task, candidate, ...)    -> EvalResult
    optimize(task_path, settings=...) -> RunReport
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["evaluate", "load_task", "optimize"]

if TYPE_CHECKING:
    from kernelwright.graphs.runner import RunReport
    from kernelwright.spec import Task


def load_task(path: str) -> Task:
    """Load a KernelBench-format task file (raises ``TaskError`` naming problem and fix)."""
    from kernelwright.spec import Task

    return Task.from_path(path)


def evaluate(task: Any, candidate: Any, **kwargs: Any):
    """Verify and time ``candidate`` against ``task`` in a sandboxed worker."""
    from kernelwright.tools.evaluate import evaluate as _evaluate

    return _evaluate(task, candidate, **kwargs)


def optimize(task_path: str, **kwargs: Any) -> RunReport:
    """Run the offline optimisation loop on a task; see ``graphs.runner.start_run``."""
    from kernelwright.config import Settings
    from kernelwright.graphs.runner import start_run

    settings = kwargs.pop("settings", None) or Settings()
    return start_run(task_path, settings, **kwargs)
