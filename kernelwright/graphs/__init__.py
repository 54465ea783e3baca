"""The optimisation loop as a LangGraph state machine, its checkpoints and run store.

Names are imported on first use (PEP 562), so reading the run store does not build the graph.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "OptimizeContext": "optimize",
    "build_optimize_graph": "optimize",
    "RunReport": "runner",
    "resume_run": "runner",
    "run_state": "runner",
    "start_run": "runner",
    "RunStore": "store",
    "open_checkpointer": "store",
}

if TYPE_CHECKING:
    from kernelwright.graphs.optimize import OptimizeContext, build_optimize_graph
    from kernelwright.graphs.runner import RunReport, resume_run, run_state, start_run
    from kernelwright.graphs.store import RunStore, open_checkpointer


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'kernelwright.graphs' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"kernelwright.graphs.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "OptimizeContext",
    "RunReport",
    "RunStore",
    "build_optimize_graph",
    "open_checkpointer",
    "resume_run",
    "run_state",
    "start_run",
]
