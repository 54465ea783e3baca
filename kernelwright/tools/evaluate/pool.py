"""A pool of evaluation workers: one per task, reused across candidates, restarted after a
crash, a timeout, or a candidate that tampered with the worker."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from kernelwright.config import Settings
from kernelwright.errors import WorkerError
from kernelwright.spec import Candidate, Contract, Task, derive_contract
from kernelwright.spec.result import EvalResult, Level
from kernelwright.tools.evaluate.process import WorkerFailed, WorkerProcess

log = logging.getLogger(__name__)

# Settings that shape the worker process itself; a change starts a new worker.
_START_KEYS = ("memory_limit_mb", "isolate_network", "worker_threads", "cache_dir")


class WorkerPool:
    """Workers keyed by task; a context manager that closes them all.

    Example:
        >>> with WorkerPool(Settings(seeds=3)) as pool:  # doctest: +SKIP
        ...     result = pool.evaluate(task, candidate)
    """

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self._workers: dict[str, WorkerProcess] = {}
        self._start_keys: dict[str, tuple] = {}
        self._contracts: dict[str, Contract] = {}
        self.starts = 0

    def contract(self, task: Task) -> Contract:
        """The task's contract, derived once per task source."""
        key = f"{task.path}:{task.source_hash}"
        if key not in self._contracts:
            self._contracts[key] = derive_contract(task)
        return self._contracts[key]

    def worker(self, task: Task, settings: Settings) -> tuple[WorkerProcess, bool]:
        """The live worker for ``task`` (started now if needed) and whether it is new."""
        key = f"{task.path}:{task.source_hash}"
        start_key = tuple(str(getattr(settings, k)) for k in _START_KEYS)
        current = self._workers.get(key)
        if current is not None and current.alive and self._start_keys[key] == start_key:
            return current, False
        self._discard(key)
        self._workers[key] = WorkerProcess(task, self.contract(task), settings)
        self._start_keys[key] = start_key
        self.starts += 1
        return self._workers[key], True

    def evaluate(self, task: Task, candidate: Candidate, *, settings: Settings | None = None,
                 observers: Sequence[str] = ()) -> EvalResult:
        """Verify and time ``candidate`` on ``task`` in the task's worker."""
        settings = settings or self.settings
        worker, fresh = self.worker(task, settings)
        phases: dict[str, float] = {"worker_start": worker.start_s if fresh else 0.0}
        marks: list[tuple[str, float]] = [("dispatch", time.monotonic())]
        request = {"op": "eval", "id": candidate.id, "source": candidate.source,
                   "settings": settings.model_dump(mode="json"), "observers": list(observers)}
        try:
            reply = worker.call(request, settings.call_timeout_s,
                                lambda phase: marks.append((phase, time.monotonic())))
        except WorkerFailed as exc:
            self._discard(f"{task.path}:{task.source_hash}")
            _add_phases(phases, marks)
            return _failed(task, candidate, str(exc), phases)
        _add_phases(phases, marks)
        if "fatal" in reply:
            self._discard(f"{task.path}:{task.source_hash}")
            raise WorkerError(f"the evaluation worker hit an internal error: {reply['fatal']}")
        result = reply["result"]
        if result.pop("restart", False):
            self._discard(f"{task.path}:{task.source_hash}")
        return EvalResult(task_name=task.name, candidate_id=candidate.id,
                          backend=candidate.backend, phases_s=phases, **result)

    def _discard(self, key: str) -> None:
        worker = self._workers.pop(key, None)
        if worker is not None:
            worker.close()

    def close(self) -> None:
        """Stop every worker."""
        for key in list(self._workers):
            self._discard(key)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"WorkerPool(workers={len(self._workers)}, starts={self.starts})"


def _add_phases(phases: dict[str, float], marks: list[tuple[str, float]]) -> None:
    """Wall time of each phase the worker announced, measured here in the parent."""
    if len(marks) < 2:  # the worker failed before announcing a phase
        return
    end = time.monotonic()
    for (name, t0), (_, t1) in zip(marks[1:], [*marks[2:], ("end", end)], strict=True):
        phases[name] = t1 - t0


def _failed(task: Task, candidate: Candidate, error: str, phases: dict[str, float]):
    return EvalResult(task_name=task.name, candidate_id=candidate.id, backend=candidate.backend,
                      level=Level.RUNTIME_ERROR, error=error, phases_s=phases)
