"""Observer hooks on the timing loop (Kernel Tuner's observers), so a profiler can attach.

An observer is created inside the worker from an import path ``"package.module:Class"`` or
``"path/to/file.py:Class"``;
``before_start`` runs just before each timed candidate call starts the clock,
``after_finish`` just after the clock stops (so hooks never add to the measured time), and
``results`` once after timing; its dict lands in ``EvalResult.observations[path]``.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from types import ModuleType
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


def _import(module: str) -> ModuleType:
    if not module.endswith(".py"):
        return importlib.import_module(module)
    spec = importlib.util.spec_from_file_location(f"_kw_observer_{Path(module).stem}", module)
    if spec is None or spec.loader is None:
        raise ValueError(f"observer file {module} cannot be imported")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_observer(path: str) -> Observer:
    """Instantiate ``"module:Class"``; raise ``ValueError`` naming the expected form."""
    module, _, name = path.rpartition(":")
    if not module or not name:
        raise ValueError(f"observer {path!r} must look like 'package.module:ClassName' or "
                         "'path/to/file.py:ClassName'")
    observer = getattr(_import(module), name)()
    if not isinstance(observer, Observer):
        raise ValueError(f"observer {path!r} lacks before_start/after_finish/results")
    return observer
