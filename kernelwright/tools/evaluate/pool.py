"""A pool of warm task sessions (per task, a reference runner) and sandboxed fork servers.

Nothing of a candidate stays warm: every candidate gets a fresh runner forked by a fork
server. What stays is trusted: the reference runner, the recording, the contract. A session
whose runner process died is started again on the next request. The fork servers hold nothing
of a task (the candidate's source and arenas come with each spawn), so the pool lends an idle
one to each evaluation, of any task with the same framework lockdown (the one thing a server
keeps of a task): one server start (a torch import in the sandbox) serves a whole campaign
instead of one per task, and a server never runs two evaluations at once, because it reaps
every process below it when one ends.

Kernel sources a candidate built are handed to the trusted builder right after its
evaluation, on a background thread, so the builder compiles them while the next candidate is
verified and timed, and a later candidate with the same source (by content hash) finds it in
the shared cache. Each source goes to the builder once per pool; the close waits for them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import torch

from kernelwright.config import Settings
from kernelwright.spec import Candidate, Contract, Task
from kernelwright.spec.result import EvalResult
from kernelwright.tools.evaluate import builder
from kernelwright.tools.evaluate.build_cache import BuildCache
from kernelwright.tools.evaluate.evaluation import CandidateEvaluation
from kernelwright.tools.evaluate.observers import load_observer
from kernelwright.tools.evaluate.orchestrator import START_TIMEOUT_S, ForkServer
from kernelwright.tools.evaluate.sandbox import SandboxProbe, probe_bwrap
from kernelwright.tools.evaluate.session import TaskSession

log = logging.getLogger(__name__)
BUILDER_POOL_S = 300.0  # the trusted builder's time per pool, all candidates together

# Settings that shape the runner processes; a change starts a new session.
_START_KEYS = ("memory_limit_mb", "worker_threads", "cache_dir", "data_dir", "call_timeout_s",
               "seeds", "cuda_arch")


@contextmanager
def single_threaded() -> Iterator[None]:
    """The orchestrator's own tensor work (copies, fills, comparisons) on one thread.

    It is memory-bound, so more threads gain little, and on a loaded machine an OpenMP team
    waiting for a descheduled member makes a 4 MB comparison 50x slower (measured: 108 ms on
    two threads, 2 ms on one, load average 9 on 2 cores)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _key(task: Task) -> str:
    return f"{task.path}:{task.source_hash}"


class WorkerPool:
    """Warm task sessions, keyed by task; a context manager that closes them all.

    Example:
        >>> with WorkerPool(Settings(seeds=3)) as pool:  # doctest: +SKIP
        ...     result = pool.evaluate(task, candidate)
    """

    def __init__(self, settings: Settings | None = None, *,
                 promoter: Callable[..., dict[str, Any]] | None = None) -> None:
        """``promoter``: how sources reach the shared cache (``builder.promote``'s contract;
        default: the trusted builder here; a cluster worker passes a Ray task)."""
        self.settings = settings or Settings()
        self._promoter = promoter or builder.promote
        # most recently used last; at most settings.warm_sessions, except while in use
        self._sessions: OrderedDict[str, tuple[tuple, TaskSession]] = OrderedDict()
        # idle fork servers by what shaped their start; an evaluation borrows one for itself
        # (a server reaps every process below it, so two evaluations never share one)
        self._servers: dict[tuple, list[ForkServer]] = {}
        self._closed = False  # closing: servers handed back are stopped, not kept
        self._in_use: Counter[str] = Counter()  # evaluations running per session key
        self._lock = threading.Lock()  # the sessions table, between evaluating threads
        self._probe: SandboxProbe | None = None
        self._pending: list[tuple[Settings, str | None, list[dict[str, Any]]]] = []
        self._builder: ThreadPoolExecutor | None = None
        self._promotions: list[Future] = []
        self._promoted: set[str] = set()  # content hashes of sources handed to the builder
        self.builder_s = 0.0  # the trusted builder's seconds so far (capped: BUILDER_POOL_S)
        self.starts = 0
        self.server_starts = 0
        self.private_builds = 0  # kernel sources candidates had to compile themselves

    @property
    def sandbox(self) -> SandboxProbe:
        """Whether bubblewrap works here (probed once per pool)."""
        if self._probe is None:
            self._probe = probe_bwrap()
            if not self._probe.available:
                log.warning("WEAK SANDBOX: %s; candidates run without bubblewrap. Fix: %s",
                            self._probe.detail, "run `kernelwright doctor`")
        return self._probe

    def session(self, task: Task, settings: Settings) -> tuple[TaskSession, bool]:
        """The live session of ``task`` (started now if needed) and whether it is new."""
        key = _key(task)
        start_key = _start_key(settings)
        with self._lock:
            held = self._sessions.get(key)
            if held is not None and held[0] == start_key and held[1].alive:
                self._sessions.move_to_end(key)
                return held[1], False
            self._discard(key)
            self._evict_idle(self.settings.warm_sessions - 1)
            bwrap = self.sandbox.path if self.sandbox.available else None
            session = TaskSession(task, settings, bwrap)
            self._sessions[key] = (start_key, session)
            self.starts += 1
            return session, True

    @contextmanager
    def _server(self, session: TaskSession, settings: Settings,
                backend: str) -> Iterator[ForkServer]:
        """A fork server for one evaluation: an idle one started with the same settings and
        holding the same framework lockdown (a server locks the task's allow-list into itself
        for good, on its first spawn), or a new one; back to the idle ones afterwards if it is
        still alive. Under a lockdown, a candidate whose backend runs without numpy gets a
        server that has no numeric package at all."""
        numeric = session.lockdown is None or not _runs_without_numpy(backend)
        key = (*_start_key(settings), session.bwrap, str(session.lockdown), numeric)
        with self._lock:
            self._closed = False  # a pool used after close() is open again
            idle = self._servers.setdefault(key, [])
            while idle and not idle[-1].alive:
                idle.pop().close()
            server = idle.pop() if idle else None
        if server is None:
            server = ForkServer(settings, session.bwrap, numeric=numeric)
            with self._lock:
                self.server_starts += 1
        try:
            yield server
        finally:
            with self._lock:
                if server.alive and not self._closed:
                    self._servers.setdefault(key, []).append(server)
                else:
                    server.close()

    def _evict_idle(self, keep: int) -> None:
        """Close least recently used sessions with no evaluation running until at most
        ``keep`` are left (sessions in use stay, even past the bound)."""
        for key in list(self._sessions):
            if len(self._sessions) <= keep:
                return
            if not self._in_use[key]:
                self._discard(key)

    def contract(self, task: Task) -> Contract:
        """The task's contract, derived by its reference runner (limited, with a timeout)."""
        with self._using(task):
            return self.session(task, self.settings)[0].contract

    def evaluate(self, task: Task, candidate: Candidate, *, settings: Settings | None = None,
                 observers: Sequence[str] = ()) -> EvalResult:
        """Verify and time ``candidate`` on ``task`` in a fresh sandboxed runner."""
        with self._using(task):
            return self._evaluate(task, candidate, settings or self.settings, observers)

    @contextmanager
    def _using(self, task: Task) -> Iterator[None]:
        """Marks ``task``'s session in use, so that no other thread's new session evicts it."""
        key = _key(task)
        with self._lock:
            self._in_use[key] += 1
        try:
            yield
        finally:
            with self._lock:
                self._in_use[key] -= 1

    def _evaluate(self, task: Task, candidate: Candidate, settings: Settings,
                  observers: Sequence[str]) -> EvalResult:
        t0 = time.monotonic()
        session, fresh = self.session(task, settings)
        with self._server(session, settings, candidate.backend) as server:
            start = time.monotonic() - t0
            fresh = fresh or server.count == 0  # a session or a server started for this one
            return self._walk(session, server, candidate, settings, observers, start, fresh)

    def _walk(self, session: TaskSession, server: ForkServer, candidate: Candidate,
              settings: Settings, observers: Sequence[str], start: float,
              fresh: bool) -> EvalResult:
        tampered = BuildCache.of(settings).verify()  # before anything is built or loaded
        if candidate.backend == "sycl":  # the shim, built once by the trusted builder
            builder.prepare(settings, session.bwrap, START_TIMEOUT_S)
        loaded = {p: load_observer(p) for p in observers}
        evaluation = CandidateEvaluation(session, server, candidate, list(loaded.values()))
        evaluation.settings = settings  # this evaluation's timing knobs (the session may be
        # warm from settings that differ only in them: min_time_s, time_compile, ...)
        evaluation.observer_paths = loaded
        with single_threaded():
            result = evaluation.run()
        phases = {"worker_start": start if fresh else 0.0, **result.phases_s}
        self.private_builds += len(evaluation.builds)
        if evaluation.builds and settings.promote_builds:
            self._promote_soon(settings, session.bwrap, evaluation.builds)
        update: dict[str, Any] = {"phases_s": phases}
        if tampered:
            update["observations"] = {**result.observations,
                                      "build_cache": {"tampered_removed": tampered}}
        if not session.alive:
            with self._lock:
                self._discard(_key(session.task))
        return result.model_copy(update=update)

    def _discard(self, key: str) -> None:
        held = self._sessions.pop(key, None)
        if held is not None:
            held[1].close()

    def _promote_soon(self, settings: Settings, bwrap: str | None,
                      builds: list[dict[str, Any]]) -> None:
        """Hand the sources not yet handed over to the trusted builder (background thread)."""
        fresh = []
        for request in builds:
            key = _content_hash(request)
            if key not in self._promoted:
                self._promoted.add(key)
                fresh.append(request)
        if not fresh:
            return
        if self.builder_s >= BUILDER_POOL_S:
            log.info("trusted builder: the pool's %g s are spent; %d sources are not shared",
                     BUILDER_POOL_S, len(fresh))
            return
        self._pending.append((settings, bwrap, fresh))
        if self._builder is None:
            self._builder = ThreadPoolExecutor(1, thread_name_prefix="kw-trusted-builder")
        self._promotions.append(self._builder.submit(self._promote, settings, bwrap, fresh))

    def _promote(self, settings: Settings, bwrap: str | None,
                 builds: list[dict[str, Any]]) -> dict[str, Any]:
        timeout = min(builder.CANDIDATE_S, settings.call_timeout_s * 2)
        report = self._promoter(builds, settings, bwrap, timeout)
        self.builder_s += float(report.get("seconds", 0.0))
        if report.get("error"):  # not shared: a later candidate may hand it over again
            log.info("trusted builder: %s", " ".join(str(report["error"]).split())[-300:])
            self._promoted.difference_update(_content_hash(b) for b in builds)
        return report  # what the builder wrote is recorded (by ``promote``, or the task)

    def wait_for_builder(self, timeout_s: float = BUILDER_POOL_S) -> list[dict[str, Any]]:
        """Wait (up to ``timeout_s`` in all) for the sources handed to the trusted builder;
        the builder's reports of those that finished."""
        deadline = time.monotonic() + timeout_s
        reports = []
        for future in self._promotions:
            try:
                reports.append(future.result(max(0.0, deadline - time.monotonic())))
            except Exception as exc:  # noqa: BLE001 - a timeout or a builder failure: unshared
                log.info("trusted builder: %s: %s", type(exc).__name__, exc)
        self._promotions = [f for f in self._promotions if not f.done()]
        return reports

    def close(self) -> None:
        """Stop every session's processes, then wait for the trusted builder (the sources
        candidates built, compiled again into the shared cache; see :mod:`builder`)."""
        with self._lock:
            self._closed = True
            for key in list(self._sessions):
                self._discard(key)
            for servers in self._servers.values():
                for server in servers:
                    server.close()
            self._servers.clear()
        self.wait_for_builder()
        if self._builder is not None:
            self._builder.shutdown(wait=False, cancel_futures=True)
            self._builder = None
        self._pending = []

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def warm(self) -> list[str]:
        """The tasks with a warm session, least recently used first."""
        return [held[1].task.name for held in self._sessions.values()]

    def __repr__(self) -> str:
        return (f"WorkerPool(sessions={len(self._sessions)}, starts={self.starts}, "
                f"server_starts={self.server_starts})")


def _runs_without_numpy(backend: str) -> bool:
    """Whether candidates of ``backend`` run without numpy: a kernel backend says so; a
    module that names none (plain torch) needs no runtime at all."""
    from kernelwright.registry import lookup
    from kernelwright.tools.backends.registry import BACKENDS

    if backend not in BACKENDS:
        return True
    return bool(lookup(BACKENDS, backend, "backend").runs_without_numpy)


def _start_key(settings: Settings) -> tuple[str, ...]:
    return tuple(str(getattr(settings, k)) for k in _START_KEYS)


def _content_hash(request: dict[str, Any]) -> str:
    """A build request's identity: backend, language, source and options."""
    return hashlib.sha256(json.dumps(request, sort_keys=True, default=str).encode()).hexdigest()
