"""The optimisation loop as a LangGraph state machine, its checkpoints and run store."""

from kernelwright.graphs.optimize import OptimizeContext, build_optimize_graph
from kernelwright.graphs.runner import RunReport, resume_run, run_state, start_run
from kernelwright.graphs.store import RunStore, open_checkpointer

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
