"""Tamper checks run in the worker: the harness's clock and sync functions, threads, and the
backends a candidate loaded.

:class:`ClockGuard` must be created at worker start, before any candidate is imported, so the
originals it remembers are the real ones.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import torch

import kernelwright.tools.backends as backends_pkg
from kernelwright.tools.backends import BACKENDS

log = logging.getLogger(__name__)

_constructed: dict[str, Any] = {}
_used: set[str] = set()  # backends the current candidate asked for (reset per candidate)


def track_backends() -> None:
    """Record every backend constructed through ``get_backend`` from now on (worker only).

    The backends' module-level helpers (``cpp.load_inline``, ``sycl.load_inline``) look
    ``get_backend`` up in the package at call time, so candidates go through the tracker.
    """
    original = backends_pkg.get_backend
    if getattr(original, "_kw_tracked", False):
        return

    @functools.wraps(original)
    def tracked(name: str) -> Any:
        backend = original(name)
        _constructed[name] = backend
        _used.add(name)
        return backend

    tracked._kw_tracked = True  # type: ignore[attr-defined]
    backends_pkg.get_backend = tracked


def _backend_classes() -> dict[str, type]:
    """Backend classes importable now (importing a backend module must stay cheap)."""
    classes: dict[str, type] = {}
    for name, target in BACKENDS.items():
        module, cls = target.split(":")
        try:
            classes[name] = getattr(importlib.import_module(module), cls)
        except Exception:  # not installed / not written yet: nothing to guard
            log.debug("backend %s not importable at worker start", name)
    return classes


class ClockGuard:
    """Remembers the timing functions at creation; :meth:`tampered` names any replaced since."""

    def __init__(self) -> None:
        self.clock: Callable[[], float] = time.perf_counter
        self._originals: dict[str, Any] = {
            "time.perf_counter": time.perf_counter,
            "time.perf_counter_ns": time.perf_counter_ns,
            "time.monotonic": time.monotonic,
            "torch.cuda.synchronize": torch.cuda.synchronize,
        }
        self._backend_sync = {n: c.synchronize for n, c in _backend_classes().items()}
        track_backends()
        self._get_backend = backends_pkg.get_backend

    def _current(self) -> dict[str, Any]:
        return {
            "time.perf_counter": time.perf_counter,
            "time.perf_counter_ns": time.perf_counter_ns,
            "time.monotonic": time.monotonic,
            "torch.cuda.synchronize": torch.cuda.synchronize,
        }

    def tampered(self) -> list[str]:
        """Names of timing or sync functions that are no longer the originals."""
        now = self._current()
        bad = [k for k, fn in self._originals.items() if now[k] is not fn]
        for name, original in self._backend_sync.items():
            cls = _backend_class_if_loaded(name)
            if cls is not None and cls.synchronize is not original:
                bad.append(f"{cls.__name__}.synchronize")
        if backends_pkg.get_backend is not self._get_backend:
            bad.append("kernelwright.tools.backends.get_backend")
        for name, backend in loaded_backends().items():
            if "synchronize" in vars(backend):
                bad.append(f"{name} backend instance synchronize")
        return bad


def _backend_class_if_loaded(name: str) -> type | None:
    module, cls = BACKENDS[name].split(":")
    mod = sys.modules.get(module)
    return getattr(mod, cls, None) if mod is not None else None


def loaded_backends() -> dict[str, Any]:
    """The backends constructed in this process since :func:`track_backends`."""
    return dict(_constructed)


def begin_candidate() -> None:
    """Forget which backends the previous candidate used (the worker outlives candidates)."""
    _used.clear()


def emulated_backends() -> list[str]:
    """Backends the current candidate used that run kernels on an emulator (no timing)."""
    loaded = loaded_backends()
    return [n for n in sorted(_used) if getattr(loaded.get(n), "emulated", False)]


def synchronizer() -> Callable[[], None]:
    """One call that waits for every loaded backend's queues/streams (resolved now)."""
    syncs = [b.synchronize for b in loaded_backends().values()]

    def sync_all() -> None:
        for fn in syncs:
            fn()

    return sync_all


class ThreadGuard:
    """Python threads alive now form the baseline; :meth:`injected` names new live ones."""

    def __init__(self) -> None:
        self._baseline = set(threading.enumerate())
        self.native_baseline = native_thread_count()

    def injected(self) -> list[str]:
        return [t.name for t in threading.enumerate() if t not in self._baseline and t.is_alive()]


def native_thread_count() -> int:
    """Threads of this process as the kernel sees them (Python and runtime threads)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()
