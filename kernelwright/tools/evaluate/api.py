"""``evaluate(task, candidate, settings)``: the one call search code and agents use."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kernelwright.config import Settings
from kernelwright.spec import Candidate, Contract, Task
from kernelwright.spec.result import EvalResult
from kernelwright.tools.evaluate.pool import WorkerPool
from kernelwright.tools.evaluate.session import contract_via_runner


def evaluate(
    task: Task | str | Path,
    candidate: Candidate | str,
    settings: Settings | None = None,
    *,
    pool: WorkerPool | None = None,
    observers: Sequence[str] = (),
) -> EvalResult:
    """Verify ``candidate`` against ``task`` and, if correct, time it against the reference.

    Candidate code runs only in a fresh runner inside the sandbox; the reference, the
    comparison and the clock stay in processes it cannot reach. A candidate that fails to
    build, is wrong, crashes, times out or breaks the protocol gives a failed ``EvalResult``,
    never an exception.

    Args:
        task: A ``Task`` or the path of a task file.
        candidate: A ``Candidate`` or the source text of a candidate module.
        settings: Seeds, timing and sandbox knobs; default ``pool.settings`` or ``Settings()``.
        pool: Reuse this pool's warm task session; without one a session is started and
            stopped.
        observers: ``"module:Class"`` paths of timing-loop observers (run in the orchestrator
            around each timed candidate batch).

    Returns:
        The verdict with its evidence, timings as ratios, and per-phase wall times.

    Example:
        >>> with WorkerPool() as pool:  # doctest: +SKIP
        ...     evaluate("examples/tasks/l1_gelu.py", source, pool=pool).summary()
    """
    task = task if isinstance(task, Task) else Task.from_path(task)
    if not isinstance(candidate, Candidate):
        candidate = Candidate(source=candidate, backend=_guess(candidate))
    if pool is not None:
        return pool.evaluate(task, candidate, settings=settings, observers=observers)
    with WorkerPool(settings) as own:
        return own.evaluate(task, candidate, observers=observers)


def _guess(source: str) -> str:
    from kernelwright.spec import guess_backend

    return guess_backend(source)


def derive_contract_limited(task: Task | str | Path, settings: Settings) -> Contract:
    """The task's contract, derived by running its reference in a separate, limited process.

    The reference runner has the memory and CPU limits of ``settings`` and must answer within
    ``settings.call_timeout_s``; a reference that hangs gives a one-line ``TaskError`` instead
    of a hung command.
    """
    task = task if isinstance(task, Task) else Task.from_path(task)
    return contract_via_runner(task, settings)
