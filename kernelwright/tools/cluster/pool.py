"""A pool of Ray actors, one per device, with the in-process pool's interface.

Each call takes an idle actor, waits for its verdict at most ``settings.cluster_deadline_s``
and hands the actor back. A worker that dies mid-evaluation (its process or node is gone)
has the evaluation re-queued on another (Ray restarts the dead actor); a worker that hangs
past the deadline is killed (and restarted by Ray) and its evaluation re-queued the same way.
The run records an evaluation once, when ``evaluate`` returns, so a re-queued evaluation is
counted once. After ``MAX_ATTEMPTS`` lost workers the candidate gets a RUNTIME_ERROR verdict
that names the workers' fate.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from kernelwright.config import Settings
from kernelwright.errors import ConfigError
from kernelwright.spec import Candidate, Contract, Task
from kernelwright.spec.result import EvalResult, Level
from kernelwright.tools.cluster.actor import DEVICE_PREFIX, EvalWorker, TaskFile

log = logging.getLogger(__name__)
MAX_ATTEMPTS = 3  # workers an evaluation may lose (died or hung) before it is given up
RESTART_WAIT_S = 5.0  # after a lost worker, times the attempt: Ray restarts the actor meanwhile


def connect(address: str) -> None:
    """Join the Ray cluster at ``address`` (once per process), or one clear error."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            "--cluster needs Ray: pip install 'kernelwright[cluster]'"
        ) from exc
    if ray.is_initialized():
        return
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        ray.init(address=address, namespace="kernelwright", log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ConfigError(
            f"cannot join the Ray cluster {address!r}: {exc}; start a head with `ray start "
            "--head` and workers with `kernelwright worker --address HEAD:6379`, or drop "
            "--cluster to evaluate in this process"
        ) from exc


def devices() -> list[tuple[str, int]]:
    """The cluster's evaluation devices: (Ray resource name, units) declared by workers."""
    import ray

    found = ray.cluster_resources()
    return sorted((k, int(v)) for k, v in found.items() if k.startswith(DEVICE_PREFIX))


class RayPool:
    """Evaluations on the cluster's device actors.

    Example:
        >>> with RayPool(Settings(cluster="auto")) as pool:  # doctest: +SKIP
        ...     result = pool.evaluate(task, candidate)
    """

    def __init__(self, settings: Settings, *, connect_to: str | None = None) -> None:
        import ray

        self.settings = settings
        connect(connect_to or settings.cluster or "auto")
        found = devices()
        if not found:
            raise ConfigError(
                f"the Ray cluster {settings.cluster!r} has no evaluation workers: start one per "
                "node with `kernelwright worker --address HEAD:6379 [--device ...]`"
            )
        remote = ray.remote(EvalWorker)
        opts = {"num_cpus": 1, "max_restarts": -1, "max_task_retries": 0, "max_concurrency": 2}
        # two threads: ``where`` answers while an evaluation runs; the pool itself sends an
        # actor one evaluation at a time
        payload = settings.model_dump_json()
        self.actors = [
            remote.options(resources={name: 1}, **opts).remote(name[len(DEVICE_PREFIX):], payload)
            for name, units in found for _ in range(units)
        ]
        self._idle = list(self.actors)
        self._cv = threading.Condition()
        self.requeued = 0  # evaluations moved to another worker (died or hung)
        self.killed = 0  # hung workers killed at the deadline
        self.in_flight: dict[int, Any] = {}  # thread id -> the actor evaluating for it

    def __repr__(self) -> str:
        return f"RayPool(actors={len(self.actors)}, requeued={self.requeued})"

    def _take(self):
        with self._cv:
            self._cv.wait_for(lambda: self._idle)
            return self._idle.pop(0)

    def _give(self, actor) -> None:
        with self._cv:
            self._idle.append(actor)
            self._cv.notify()

    def _call(self, method: str, *args: Any) -> tuple[Any, str | None]:
        """Run ``method`` on an idle actor; on a dead or hung one, on the next. Returns the
        answer and ``None``, or ``None`` and what became of the workers it lost."""
        import ray
        from ray.exceptions import GetTimeoutError, RayActorError

        lost: list[str] = []
        for attempt in range(MAX_ATTEMPTS):
            if attempt:  # a restarting actor answers ActorUnavailableError at once: give the
                time.sleep(RESTART_WAIT_S * attempt)  # one Ray is restarting time to come back
            actor = self._take()
            self.in_flight[threading.get_ident()] = actor
            try:
                ref = getattr(actor, method).remote(*args)
                return ray.get(ref, timeout=self.settings.cluster_deadline_s), None
            except GetTimeoutError:
                self.killed += 1
                lost.append(f"a worker hung past {self.settings.cluster_deadline_s:g} s")
                log.warning("evaluation worker hung past the deadline: killed, re-queued")
                ray.kill(actor, no_restart=False)  # Ray starts it again
            except RayActorError as exc:
                lost.append(f"a worker died ({type(exc).__name__})")
                log.warning("evaluation worker died mid-evaluation: re-queued")
            finally:
                self.in_flight.pop(threading.get_ident(), None)
                self._give(actor)
            self.requeued += 1
        return None, "; ".join(lost)

    def evaluate(self, task: Task, candidate: Candidate, *, settings: Settings | None = None,
                 observers: Sequence[str] = ()) -> EvalResult:
        """Verify and time ``candidate`` on a worker's device (the worker's sandbox)."""
        payload = settings.model_dump_json() if settings is not None else None
        result, lost = self._call("evaluate", TaskFile.of(task), candidate, payload,
                                  list(observers))
        if lost is None:
            return result
        return EvalResult(task_name=task.name, candidate_id=candidate.id,
                          backend=candidate.backend, level=Level.RUNTIME_ERROR,
                          error=f"no worker finished this evaluation: {lost}")

    def contract(self, task: Task) -> Contract:
        contract, lost = self._call("contract", TaskFile.of(task))
        if lost is not None:
            raise ConfigError(f"no worker derived the contract of {task.name}: {lost}")
        return contract

    def close(self) -> None:
        import ray

        refs = [a.release.remote() for a in self.actors]
        try:
            ray.get(refs, timeout=60)
        except Exception as exc:  # noqa: BLE001  (a dead worker has nothing to close)
            log.info("closing the evaluation workers: %s", exc)
        for actor in self.actors:
            ray.kill(actor, no_restart=True)

    def __enter__(self) -> RayPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
