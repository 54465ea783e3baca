"""Observer hooks on the timing loop (Kernel Tuner's observers), so a profiler can attach.

An observer is created inside the worker from an import path ``"package.module:Class"``;
``before_start`` runs just before each timed candidate call starts the clock,
``after_finish`` just after the clock stops (so hooks never add to the measured time), and
``results`` once after timing; its dict lands in ``EvalResult.observations[path]``.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Observer(Protocol):
    """A hook on the harness's timing loop."""

    def before_start(self) -> None:
        """Called before each timed candidate call."""

    def after_finish(self) -> None:
        """Called after each timed candidate call (after the device was synchronised)."""

    def results(self) -> dict[str, Any]:
        """JSON-serialisable observations, collected once timing is done."""


class NullObserver:
    """Observes nothing."""

    def before_start(self) -> None:
        pass

    def after_finish(self) -> None:
        pass

    def results(self) -> dict[str, Any]:
        return {}


def load_observer(path: str) -> Observer:
    """Instantiate ``"module:Class"``; raise ``ValueError`` naming the expected form."""
    module, _, name = path.partition(":")
    if not module or not name:
        raise ValueError(f"observer {path!r} must look like 'package.module:ClassName'")
    observer = getattr(importlib.import_module(module), name)()
    if not isinstance(observer, Observer):
        raise ValueError(f"observer {path!r} lacks before_start/after_finish/results")
    return observer
