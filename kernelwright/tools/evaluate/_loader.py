"""Importing a candidate module fresh, constructing models, and classifying failures."""

from __future__ import annotations

import importlib.util
import itertools
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from kernelwright.errors import KernelwrightError, LaunchError
from kernelwright.spec.inputs import init_inputs_for
from kernelwright.spec.result import Flag, Level
from kernelwright.tools.backends.base import KernelModule, KernelStats

_counter = itertools.count()
MAX_ERROR_CHARS = 6000


class Rejected(Exception):
    """A candidate failed a rung of the ladder; carries the level, the reason and any flags."""

    def __init__(self, level: Level, error: str, flags: set[Flag] | None = None,
                 errors: tuple[float, float] | None = None) -> None:
        super().__init__(error)
        self.level = level
        self.error = error
        self.flags = flags or set()
        self.errors = errors  # (max abs, max rel) when values were compared


def error_text(exc: BaseException, where: str) -> str:
    """``where`` plus the exception and the tail of its traceback, capped in length."""
    if isinstance(exc, KernelwrightError):
        text = f"{where}: {type(exc).__name__}: {exc}"
    else:
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-4:])
        text = f"{where}: {type(exc).__name__}: {exc}\n{tb.rstrip()}"
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 20] + "\n...[cut]"


def classify(exc: BaseException, where: str) -> Rejected:
    """A build problem (any kernelwright error but a launch error) is BUILD_FAILED."""
    build = isinstance(exc, KernelwrightError) and not isinstance(exc, LaunchError)
    return Rejected(Level.BUILD_FAILED if build else Level.RUNTIME_ERROR, error_text(exc, where))


def check_syntax(source: str, filename: str) -> None:
    """Raise ``Rejected(SYNTAX_ERROR)`` if ``source`` does not compile."""
    try:
        compile(source, filename, "exec")
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        raise Rejected(Level.SYNTAX_ERROR, f"syntax error at line {line}: {exc}") from exc


def import_candidate(source: str, workdir: Path, candidate_id: str) -> ModuleType:
    """Write ``source`` to a file and import it as a new module (never a cached one)."""
    path = workdir / f"candidate_{candidate_id}.py"
    path.write_text(source)
    check_syntax(source, str(path))
    name = f"_kw_candidate_{candidate_id}_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(name, None)
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise Rejected(Level.RUNTIME_ERROR, f"importing the candidate raised {exc!r}") from exc
        raise classify(exc, "importing the candidate") from exc
    if not isinstance(getattr(module, "ModelNew", None), type):
        raise Rejected(
            Level.RUNTIME_ERROR,
            "the candidate module does not define class ModelNew(nn.Module) with the "
            "reference Model's constructor signature",
        )
    return module


def forget(module: ModuleType) -> None:
    """Drop a candidate module from ``sys.modules``."""
    sys.modules.pop(module.__name__, None)


def build_model(cls: type, task: ModuleType, seed: int, where: str) -> torch.nn.Module:
    """Construct ``cls(*get_init_inputs())`` under ``seed``; failures become ``Rejected``."""
    torch.manual_seed(seed)
    try:
        model = cls(*init_inputs_for(task))
    except (Exception, SystemExit) as exc:
        raise classify(exc, f"constructing {where}") from exc
    if isinstance(model, torch.nn.Module):
        model.eval()
    return model


def share_weights(reference: torch.nn.Module, candidate: Any) -> None:
    """Load the reference's weights into the candidate when their state_dict keys match."""
    if not isinstance(candidate, torch.nn.Module):
        return
    ref_state = reference.state_dict()
    cand_state = candidate.state_dict()
    if ref_state and set(ref_state) == set(cand_state):
        try:
            candidate.load_state_dict(ref_state)
        except RuntimeError:  # same names, other shapes: the candidate keeps its own
            pass


def kernel_stats(*roots: Any) -> dict[str, KernelStats]:
    """Compiler statistics of every ``KernelModule`` reachable from ``roots`` (one level)."""
    found: dict[str, KernelStats] = {}
    for root in roots:
        values = list(vars(root).values()) if hasattr(root, "__dict__") else []
        for value in values:
            if isinstance(value, KernelModule):
                found.update(value.build.stats)
    return found
