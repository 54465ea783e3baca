"""The one run-loop driver: every entry point (optimize, resume, campaign slices, chat, the MCP
server and the LangChain tool, which all go through these) streams its graph here.

- Each graph is compiled once per process (:func:`graph_for`); a run gets a shallow copy bound
  to its store's checkpointer. The compiled graph holds no run data: the run's
  :class:`~kernelwright.graphs.optimize.OptimizeContext` travels as LangGraph's ``context``
  (the nodes read it from their ``Runtime``), so no run's team leaks into another's graph.
- :func:`run_settings` is the one place where a continued run takes back the settings it was
  started with (backend, budget, its LLM endpoint unless the caller names another).
- :func:`drive` streams with ``durability="sync"`` (every step checkpointed before the next),
  hands each node's update to the caller's observer, and returns the thread's last snapshot.

Example:
    >>> with offline_team(settings, runs, run_id) as ctx:  # doctest: +SKIP
    ...     snap = drive("optimize", ctx, open_checkpointer(runs.root), run_id,
    ...                  initial_state(run_id, runs.meta(run_id)), limit=100)
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from kernelwright.config import LLMSettings, Settings
from kernelwright.graphs.optimize import OptimizeContext, recursion_limit

Observer = Callable[[str, dict[str, Any]], None]  # (node name, state update)

# Steps a chat stream may take between two reviews: its budget grows with each rejection
# inside the stream, so no bound is derived from the budget it started with.
OPEN_LIMIT = 10_000

_compiled: dict[str, CompiledStateGraph] = {}
_lock = threading.Lock()
compiles: Counter[str] = Counter()  # compilations per graph kind in this process (tests read it)


def _builders() -> dict[str, Callable[[], CompiledStateGraph]]:
    from kernelwright.graphs.chat import build_chat_graph
    from kernelwright.graphs.optimize import build_optimize_graph

    return {"optimize": build_optimize_graph, "chat": build_chat_graph}


def graph_for(kind: str, checkpointer: Any) -> CompiledStateGraph:
    """The ``kind`` graph ("optimize" or "chat"), compiled once, bound to ``checkpointer``."""
    with _lock:
        if kind not in _compiled:
            builders = _builders()
            if kind not in builders:
                raise ValueError(f"no run graph {kind!r}: use one of {sorted(builders)}")
            _compiled[kind] = builders[kind]()
            compiles[kind] += 1
        graph = _compiled[kind]
    return graph.copy(update={"checkpointer": checkpointer})


def run_settings(settings: Settings, meta: dict[str, Any], keys: tuple[str, ...]) -> Settings:
    """The settings a run continues with: ``keys`` from its meta (those it has), and the LLM
    endpoint it began with unless ``settings.llm`` names one (e.g. after the first was down)."""
    update: dict[str, Any] = {k: meta[k] for k in keys if meta.get(k)}
    if not settings.llm.enabled and meta.get("llm"):
        update["llm"] = LLMSettings(**meta["llm"])
    return settings.model_copy(update=update)


def step_limit(settings: Settings, budget: int) -> int:
    """The recursion limit of a stream that spends up to ``budget`` evaluations."""
    return recursion_limit(budget, settings.max_idle_rounds)


def initial_state(run_id: str, meta: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A run's first input, from its meta (``extra`` adds or overrides keys)."""
    state = {
        "run_id": run_id,
        "task_path": meta["task_path"],
        "backend": meta["backend"],
        "budget": meta["budget"],
        "started": meta["started"],
        "plan": None,
    }
    return {**state, **extra}


def config_of(thread_id: str, settings: Settings, limit: int = OPEN_LIMIT) -> dict[str, Any]:
    return {
        "configurable": {"thread_id": thread_id},
        "max_concurrency": settings.max_concurrent_evals,
        "recursion_limit": limit,
    }


def has_checkpoint(checkpointer: Any, thread_id: str) -> bool:
    return checkpointer.get_tuple({"configurable": {"thread_id": thread_id}}) is not None


def snapshot(kind: str, checkpointer: Any, thread_id: str):
    """The thread's last state (None: no checkpoint yet); reads only, no context needed."""
    if not has_checkpoint(checkpointer, thread_id):
        return None
    return graph_for(kind, checkpointer).get_state({"configurable": {"thread_id": thread_id}})


def drive(
    kind: str,
    ctx: OptimizeContext,
    checkpointer: Any,
    thread_id: str,
    start: Any,
    *,
    limit: int = OPEN_LIMIT,
    observer: Observer | None = None,
    quit_requested: Callable[[], bool] | None = None,
):
    """Stream thread ``thread_id`` of the ``kind`` graph from ``start`` (an input, ``None`` to
    continue from its checkpoint, or a ``Command``) until it ends, pauses for an
    ``interrupt``, or ``quit_requested()`` says stop after a step; its snapshot then."""
    graph = graph_for(kind, checkpointer)
    config = config_of(thread_id, ctx.settings, limit)
    for chunk in graph.stream(
        start, config, stream_mode="updates", durability="sync", context=ctx
    ):
        for node, update in chunk.items():
            if observer is not None and node != "__interrupt__":
                observer(node, update or {})
        if quit_requested is not None and quit_requested():
            break
    return graph.get_state(config)
