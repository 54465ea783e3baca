"""The LangChain tool and the embeddable LangGraph graph; the example that uses both."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from kernelwright.agents.critic import RuleCritic
from kernelwright.agents.profiler import RooflineProfiler
from kernelwright.config import Settings
from kernelwright.graphs.optimize import OptimizeContext
from kernelwright.graphs.store import RunStore
from kernelwright.serve.tool import build_optimize_subgraph, optimize_tool
from kernelwright.spec import Candidate, ImplementationSpace
from kernelwright.spec.opclass import OperatorClass
from kernelwright.spec.peaks import MachinePeaks
from kernelwright.spec.plan import Plan
from kernelwright.spec.result import EvalResult, Level, Timing

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "examples" / "tasks"


class _Planner:
    def plan(self, task, contract, backend):
        return Plan(operator_class=OperatorClass.ELEMENTWISE,
                    implementation_space=ImplementationSpace.CUSTOM_KERNEL, backend=backend,
                    strategy="s", rationale="r", flops=1e6, min_bytes=10**6)  # fmt: skip


class _Coder:
    def propose(self, task, contract, plan, history, n):
        done = len(history.profiles)
        return [Candidate(source=f"# {done + i}", backend="torch", params={"i": done + i})
                for i in range(n)]  # fmt: skip


def _evaluate(task, candidate):
    speed = 1.0 + candidate.params["i"]
    timing = Timing(reference_median_s=1.0, reference_iqr_s=0.0, candidate_median_s=1.0 / speed,
                    candidate_iqr_s=0.0, repeats=3, speedup=speed, speedup_low=speed,
                    speedup_high=speed)  # fmt: skip
    return EvalResult(task_name=task.name, candidate_id=candidate.id, backend="torch",
                      level=Level.CORRECT, timing=timing)  # fmt: skip


@contextlib.contextmanager
def scripted_team(settings, store, run_id):
    peaks = MachinePeaks(bandwidth_gbps=10.0, gflops=100.0)
    yield OptimizeContext(settings=settings, store=store, planner=_Planner(), coder=_Coder(),
                          profiler=RooflineProfiler(peaks), critic=RuleCritic(),
                          evaluate=_evaluate)  # fmt: skip


@pytest.fixture
def settings(tmp_path):
    return Settings(data_dir=tmp_path / "store", cache_dir=tmp_path / "cache", budget=3)


def test_tool_runs_to_the_end_and_reports(settings):
    tool = optimize_tool(settings, roots=[TASKS], context_factory=scripted_team)
    assert tool.name == "optimize_kernel"
    assert set(tool.args) == {"task_path", "budget", "backend"}
    report = tool.invoke({"task_path": str(TASKS / "l1_gelu.py"), "budget": 4})
    assert report["correct"] and report["evaluations"] == 4
    assert report["best_speedup"] == pytest.approx(4.0)


def test_tool_errors_come_back_as_text(settings, tmp_path):
    outside = tmp_path / "task.py"
    outside.write_text("x = 1\n")
    tool = optimize_tool(settings, roots=[TASKS], context_factory=scripted_team)
    text = tool.invoke({"task_path": str(outside)})
    assert isinstance(text, str) and "outside the directories" in text
    bad = tool.invoke({"task_path": str(TASKS / "l1_gelu.py"), "backend": "fortran"})
    assert isinstance(bad, str) and "bad arguments" in bad and "backend" in bad
    assert RunStore(settings.data_dir).run_ids() == []  # nothing was started


def test_subgraph_keeps_its_run_id_across_a_resume(settings):
    saver = InMemorySaver()
    graph = build_optimize_subgraph(settings, checkpointer=saver, context_factory=scripted_team)
    config = {"configurable": {"thread_id": "parent-1"}}
    start = {"task_path": str(TASKS / "l1_gelu.py")}
    graph.invoke(start, config, interrupt_after=["assign_run_id"])
    run_id = graph.get_state(config).values["run_id"]
    assert run_id.startswith("l1_gelu-")
    state = graph.invoke(None, config)  # resumed: the same run id, finished
    assert state["run_id"] == run_id and state["report"]["run_id"] == run_id
    assert state["report"]["evaluations"] == 3
    assert RunStore(settings.data_dir).run_ids() == [run_id]


@pytest.mark.slow
def test_example_runs_offline(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KERNELWRIGHT_DATA_DIR": str(tmp_path / "d"),
           "KERNELWRIGHT_CACHE_DIR": str(tmp_path / "c")}  # fmt: skip
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "langgraph_tool.py"), "--budget", "1",
         "--store", str(tmp_path / "store")],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    agent, pipeline = done.stdout.strip().splitlines()[-2:]
    assert agent.startswith("agent: Optimised l1_gelu: best speedup") and "1 evaluations" in agent
    assert pipeline.startswith("pipeline: l1_gelu: ") and "run l1_gelu-" in pipeline
    assert len(RunStore(tmp_path / "store").run_ids()) == 2
