"""Harness verdicts on lowered corpus candidates, computed in the background by a few threads.

The harness's cost per task is fixed cost, mostly in its own processes: a task session (a
reference runner and a sandboxed fork server, each importing torch), the recording of the
reference, and the builds (g++, icpx) in the candidate runner. The orchestrator side of one
evaluation mostly waits on those processes, so a couple of threads, each evaluating one task at
a time in a :class:`WorkerPool` of its own, keep both cores of a CI machine busy while the test
process lowers the next tasks (lowering holds the GIL, so it stays on the main thread).

Each thread has its own pool, keeping one task's session warm (a session holds a reference
runner, ~230 MB with torch loaded) and its idle fork server, which every task's candidates share:
a task costs one process start, not two. Each thread has its own build cache and data
directory: two pools building the SYCL shim into one cache at once would race.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import torch

from kernelwright.config import Settings
from kernelwright.spec import Candidate, EvalResult, Task
from kernelwright.tools.evaluate import WorkerPool


def verify_settings(root: Path) -> Settings:
    """Correctness only: three seeds (the harness's minimum), the harness's minimal timing
    (3 rounds, no warm-up; there is no verify-only mode), no build promotion (the trusted
    builder would compile every source a second time when the pool closes)."""
    return Settings(data_dir=root / "data", cache_dir=root / "cache", seeds=3, min_time_s=1e-3,
                    warmup_calls=0, max_repeats=3, record_replay=True, promote_builds=False,
                    warm_sessions=1)


def describe(task: Task, backend: str, result: EvalResult) -> str | None:
    """Why ``result`` is not a correct verdict (None if it is)."""
    if result.correct:
        return None
    return (f"{task.name} [{backend}] {result.level.name.lower()}: "
            f"{(result.error or '').strip()[:1500]}")


class BackgroundVerifier:
    """Evaluates submitted candidates on ``workers`` threads; :meth:`wait` gives the verdicts.
    ``backends`` are those usable here (the tests submit no others).

    One submission is one task's candidates for several backends, evaluated in order by one
    thread, so they share the task's session (one worker start, one recording).
    """

    def __init__(self, root: Path, backends: list[str], workers: int = 2) -> None:
        self.root, self.backends = root, backends
        self._local = threading.local()
        self._pools: list[WorkerPool] = []  # one per thread
        self._lock = threading.Lock()
        self._futures: dict[str, Future] = {}
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kw-verify")
        self._threads = torch.get_num_threads()

    def submitted(self, key: str) -> bool:
        return key in self._futures

    def submit(self, key: str, task: Task, candidates: dict[str, Candidate]) -> None:
        if key not in self._futures:
            self._futures[key] = self._executor.submit(self._evaluate, task, candidates)

    def wait(self, key: str, timeout: float | None = None) -> dict[str, EvalResult]:
        """The verdicts of submission ``key``, by backend (raises what the evaluation raised)."""
        return self._futures[key].result(timeout)

    def _pool(self) -> WorkerPool:
        """This thread's pool, in its own directory (its own build cache: the SYCL shim is
        built once each)."""
        pool = getattr(self._local, "pool", None)
        if pool is None:
            with self._lock:
                pool = WorkerPool(verify_settings(self.root / f"worker{len(self._pools)}"))
                self._pools.append(pool)
            self._local.pool = pool
        return pool

    def _evaluate(self, task: Task, candidates: dict[str, Candidate]) -> dict[str, EvalResult]:
        pool = self._pool()
        return {backend: pool.evaluate(task, cand) for backend, cand in candidates.items()}

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
        for pool in self._pools:
            pool.close()
        # the harness sets the orchestrator's torch threads to 1 around each evaluation; two
        # threads doing so at once can leave this process at 1
        torch.set_num_threads(self._threads)
