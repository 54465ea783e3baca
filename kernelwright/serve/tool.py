"""kernelwright inside a LangChain / LangGraph application: a tool, or a graph to embed.

Two entry points over the same call (``graphs.runner.start_run``):

- :func:`optimize_tool` — a LangChain ``StructuredTool`` an agent calls with a task path; it
  runs the optimisation to the end and returns the run's report as a dict. Errors (a path
  outside the roots, an unknown backend) come back to the agent as the tool's text, not as an
  exception, so the agent can correct itself.
- :func:`build_optimize_subgraph` — a compiled LangGraph graph with state
  ``{task_path, budget, backend, run_id, report}`` that an application adds as a node. The run
  id is assigned in its own step, so when the parent graph is resumed after a crash the
  optimisation continues the same checkpointed run instead of starting a new one.

Example:
    >>> tool = optimize_tool(Settings(backend="cpp"), roots=[Path("tasks")])  # doctest: +SKIP
    >>> tool.invoke({"task_path": "tasks/l1_gelu.py", "budget": 4})  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from langchain_core.tools import StructuredTool, ToolException
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from kernelwright.config import Settings
from kernelwright.errors import KernelwrightError
from kernelwright.graphs.runner import start_run
from kernelwright.graphs.store import new_run_id
from kernelwright.graphs.teams import offline_team
from kernelwright.serve.roots import Roots


class OptimizeInput(BaseModel):
    """What the calling agent passes."""

    task_path: str = Field(description="KernelBench-format task file (.py) to optimise")
    budget: int | None = Field(None, ge=1, le=10_000, description="candidate evaluations")
    backend: Literal["sycl", "cpp", "cuda"] | None = Field(None, description="kernel backend")


class OptimizeState(TypedDict, total=False):
    """State of the embeddable graph (a parent graph shares these keys)."""

    task_path: str
    budget: int | None
    backend: str | None
    run_id: str | None
    report: dict[str, Any] | None


class Optimizer:
    """One optimisation call with fixed settings, store and roots (shared by both entry points)."""

    def __init__(self, settings: Settings, *, roots: list[Path] | None = None,
                 store: Path | None = None, context_factory=offline_team) -> None:  # fmt: skip
        self.settings, self.store, self.context_factory = settings, store, context_factory
        self.roots = Roots(roots) if roots else None

    def __repr__(self) -> str:
        return f"Optimizer(backend={self.settings.backend!r}, roots={self.roots!r})"

    def task(self, task_path: str) -> Path:
        return self.roots.check(task_path, "task_path") if self.roots else Path(task_path)

    def run(self, task_path: str, budget: int | None = None, backend: str | None = None,
            run_id: str | None = None) -> dict[str, Any]:  # fmt: skip
        """Optimise to the end (or continue ``run_id``) and return the run's report."""
        task = self.task(task_path)
        update = {k: v for k, v in {"budget": budget, "backend": backend}.items() if v}
        settings = self.settings.model_copy(update=update)
        report = start_run(task, settings, run_id=run_id, store=self.store,
                           context_factory=self.context_factory)  # fmt: skip
        return report.model_dump()


def optimize_tool(settings: Settings, **kwargs: Any) -> StructuredTool:
    """A ``StructuredTool`` named ``optimize_kernel`` (keyword arguments as for ``Optimizer``)."""
    optimizer = Optimizer(settings, **kwargs)

    def optimize_kernel(task_path: str, budget: int | None = None,
                        backend: str | None = None) -> dict[str, Any]:  # fmt: skip
        try:
            return optimizer.run(task_path, budget, backend)
        except (KernelwrightError, ValueError) as exc:
            raise ToolException(str(exc)) from exc

    return StructuredTool.from_function(
        func=optimize_kernel,
        name="optimize_kernel",
        description="Make a PyTorch reference (KernelBench task file) faster with verified "
        "custom kernels; returns the best speedup, its spread and the kernel's path.",
        args_schema=OptimizeInput,
        handle_tool_error=True,
        handle_validation_error=lambda exc: f"bad arguments for optimize_kernel: {exc}",
    )


def build_optimize_subgraph(settings: Settings, *, checkpointer=None,
                            **kwargs: Any) -> CompiledStateGraph:  # fmt: skip
    """``assign_run_id -> optimize``; embed it as a node or invoke it on its own."""
    optimizer = Optimizer(settings, **kwargs)

    def assign_run_id(state: OptimizeState) -> dict[str, Any]:
        if state.get("run_id"):
            return {}
        return {"run_id": new_run_id(optimizer.task(state["task_path"]).stem)}

    def optimize(state: OptimizeState) -> dict[str, Any]:
        report = optimizer.run(state["task_path"], state.get("budget"), state.get("backend"),
                               run_id=state["run_id"])  # fmt: skip
        return {"report": report}

    graph = StateGraph(OptimizeState)
    graph.add_node("assign_run_id", assign_run_id)
    graph.add_node("optimize", optimize)
    graph.add_edge(START, "assign_run_id")
    graph.add_edge("assign_run_id", "optimize")
    graph.add_edge("optimize", END)
    return graph.compile(checkpointer=checkpointer)
