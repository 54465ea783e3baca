"""kernelwright inside a LangGraph application, offline: as an agent's tool, and as a subgraph.

1. An agent (ChatOpenAI, here talking to kernelwright's scripted OpenAI-compatible server so
   that no network or key is needed) is given the ``optimize_kernel`` tool; it calls it on a
   task, the tool runs a real optimisation, and the agent answers with the measured speedup.
2. The same optimisation embedded as a node of a parent graph (``build_optimize_subgraph``).

Run:  python examples/langgraph_tool.py --backend cpp --budget 2
With a real model, replace the scripted server by ``ChatOpenAI(model=..., api_key=...)``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from typing_extensions import TypedDict

from kernelwright.config import Settings
from kernelwright.serve.tool import build_optimize_subgraph, optimize_tool
from kernelwright.testing.scripted_llm import ScriptedLLM, reply, tool_call

TASKS = Path(__file__).resolve().parent / "tasks"


def speed(value: float | None) -> str:
    return "none correct" if value is None else f"{value:.2f}x"


def scripted_agent_replies(task: Path, budget: int):
    """The scripted model: call the tool first, then report what the tool returned."""

    def route(body: dict[str, Any]):
        tool_results = [m for m in body["messages"] if m.get("role") == "tool"]
        if not tool_results:
            return tool_call("optimize_kernel", {"task_path": str(task), "budget": budget})
        report = json.loads(tool_results[-1]["content"])
        return reply(
            f"Optimised {report['task']}: best speedup {speed(report['best_speedup'])} "
            f"after {report['evaluations']} evaluations; kernel at {report['kernel_path']}."
        )

    return route


def agent_app(llm: ChatOpenAI, tool):
    """The smallest tool-calling agent: model -> tools -> model until it stops calling."""
    model = llm.bind_tools([tool])

    def agent(state: MessagesState) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([tool]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


class Pipeline(TypedDict, total=False):
    task_path: str
    budget: int | None
    backend: str | None
    run_id: str | None
    report: dict[str, Any] | None
    verdict: str


def pipeline_app(settings: Settings, store: Path):
    """A parent graph with kernelwright's compiled graph as one node, then its own step."""

    def verdict(state: Pipeline) -> dict:
        r = state["report"]
        faster = r["correct"] and (r["best_speedup"] or 0) > 1
        return {"verdict": f"{r['task']}: {'ship it' if faster else 'keep PyTorch'} "
                           f"({speed(r['best_speedup'])}, run {r['run_id']})"}  # fmt: skip

    graph = StateGraph(Pipeline)
    graph.add_node("kernelwright", build_optimize_subgraph(settings, store=store))
    graph.add_node("verdict", verdict)
    graph.add_edge(START, "kernelwright")
    graph.add_edge("kernelwright", "verdict")
    graph.add_edge("verdict", END)
    return graph.compile()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", type=Path, default=TASKS / "l1_gelu.py")
    parser.add_argument("--backend", default="cpp")
    parser.add_argument("--budget", type=int, default=2)
    parser.add_argument("--store", type=Path, default=None, help="default: a temporary dir")
    args = parser.parse_args()
    store = args.store or Path(tempfile.mkdtemp(prefix="kernelwright-example-"))
    settings = Settings(backend=args.backend, budget=args.budget)
    task = args.task.resolve()

    tool = optimize_tool(settings, roots=[task.parent], store=store)
    with ScriptedLLM(router=scripted_agent_replies(task, args.budget)) as server:
        llm = ChatOpenAI(model=server.model, base_url=server.base_url, api_key="offline",
                         use_responses_api=False, max_retries=0)  # fmt: skip
        result = agent_app(llm, tool).invoke(
            {"messages": [HumanMessage(f"Make {task.name} faster, keep fp32 exact.")]}
        )
    print("agent:", result["messages"][-1].content)

    state = pipeline_app(settings, store).invoke({"task_path": str(task), "budget": args.budget})
    print("pipeline:", state["verdict"])


if __name__ == "__main__":
    main()
