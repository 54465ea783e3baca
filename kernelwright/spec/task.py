"""Loading KernelBench-format task files: ``Model``, ``get_inputs``, ``get_init_inputs``."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

from pydantic import BaseModel, ConfigDict, PrivateAttr

from kernelwright.errors import TaskError


class Task(BaseModel):
    """A reference computation given as a KernelBench-format problem file.

    Example:
        >>> task = Task.from_path("examples/tasks/l1_gelu.py")  # doctest: +SKIP
        >>> task.name
        'l1_gelu'
    """

    model_config = ConfigDict(frozen=True)

    path: Path
    name: str
    source_hash: str
    _module: ModuleType | None = PrivateAttr(None)

    @classmethod
    def from_path(cls, path: str | Path) -> Task:
        p = Path(path).resolve()
        if not p.is_file():
            what = "is a directory" if p.is_dir() else "does not exist"
            raise TaskError(
                f"task file {path} {what}: pass the path of a Python file defining "
                "Model, get_inputs and get_init_inputs"
            )
        text = p.read_bytes()
        key = (p, hashlib.sha256(text).hexdigest()[:16])
        if key not in _LOADED:  # one import per task source and process
            task = cls(path=p, name=p.stem, source_hash=key[1])
            task._module = task.load_module()  # fail now, with a clear message, not in a worker
            _LOADED[key] = task
        return _LOADED[key]

    def module(self) -> ModuleType:
        """The task's module, imported once per process (by :meth:`from_path`); the planner's
        trace and the contract's reference runs share it."""
        if self._module is None:
            self._module = self.load_module()
        return self._module

    def load_module(self) -> ModuleType:
        """Import the task file as a fresh module and check it has what a task needs."""
        return import_task_module(self.path)


_LOADED: dict[tuple[Path, str], Task] = {}


def import_task_module(path: Path) -> ModuleType:
    """Import ``path`` under a private module name; raise ``TaskError`` naming problem and fix."""
    mod_name = f"_kernelwright_task_{hashlib.sha1(str(path).encode()).hexdigest()[:10]}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise TaskError(f"task file {path} cannot be imported: give it a .py suffix")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise TaskError(
            f"task file {path} has a syntax error at line {exc.lineno}: {exc.msg}. "
            "Fix the Python syntax and load it again."
        ) from exc
    except Exception as exc:
        raise TaskError(
            f"task file {path} raised {type(exc).__name__} while being imported: {exc}. "
            "Make the module importable on its own (no side effects that can fail).\n"
            + _short_traceback(exc)
        ) from exc
    sys.modules.pop(mod_name, None)
    _check_members(path, module)
    return module


def _check_members(path: Path, module: ModuleType) -> None:
    missing = [n for n in ("Model", "get_inputs") if not hasattr(module, n)]
    if missing:
        raise TaskError(
            f"task file {path} does not define {', '.join(missing)}: a task file defines "
            "`class Model(nn.Module)`, `get_inputs()` returning the input tensors and, "
            "optionally, "
            "`get_init_inputs()` returning the constructor arguments"
        )
    if not callable(module.get_inputs):
        raise TaskError(f"task file {path}: get_inputs must be a function returning a list")


def _short_traceback(exc: BaseException) -> str:
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return "".join(lines[-3:]).rstrip()
