"""The lead's optimisation graph driven by the LLM policies against the scripted server."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from kernelwright.agents import LLMCoder, LLMCritic, LLMPlanner
from kernelwright.agents.critic import RuleCritic
from kernelwright.agents.profiler import RooflineProfiler
from kernelwright.config import Settings
from kernelwright.graphs.optimize import OptimizeContext
from kernelwright.graphs.runner import run_state, start_run
from kernelwright.spec import ImplementationSpace
from kernelwright.spec.opclass import OperatorClass
from kernelwright.spec.peaks import MachinePeaks
from kernelwright.spec.plan import Action, Plan
from kernelwright.spec.result import EvalResult, Level, Timing
from kernelwright.testing.scripted_llm import reply, tool_call

TASK = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "l1_gelu.py"
PEAKS = MachinePeaks(machine="test", bandwidth_gbps=10.0, gflops=100.0, threads=1)
MODULE = (
    'import torch\nSRC = r"""\n// [EVOLVE_START]\n#define BLOCK 64\n// [EVOLVE_END]\n"""\n\n'
    "class ModelNew(torch.nn.Module):\n    pass\n"
)
EDIT = "<<<<<<< SEARCH\n#define BLOCK 64\n=======\n#define BLOCK 256\n>>>>>>> REPLACE\n"


class RulePlan:
    def plan(self, task, contract, backend):
        return Plan(operator_class=OperatorClass.ELEMENTWISE,
                    implementation_space=ImplementationSpace.CUSTOM_KERNEL, backend=backend,
                    strategy="rule", rationale="rule", flops=1e6, min_bytes=1_000_000)


def evaluate(task, candidate):
    speed = 2.0 if "BLOCK 256" in candidate.source else 1.2
    timing = Timing(reference_median_s=1e-3, reference_iqr_s=1e-5, candidate_median_s=1e-3 / speed,
                    candidate_iqr_s=1e-5, repeats=10, speedup=speed, speedup_low=speed,
                    speedup_high=speed)
    return EvalResult(task_name=task.name, candidate_id=candidate.id, backend=candidate.backend,
                      level=Level.CORRECT, timing=timing)


@pytest.mark.skipif(not TASK.is_file(), reason="examples/tasks/l1_gelu.py is missing")
def test_llm_run_refines_the_best_and_stops_at_the_token_budget(scripted_llm, make_client,
                                                                tmp_path):
    # five replies of 2,400 tokens; the prompts' estimates (chars / 4) count before each call,
    # so the sixth request (12,000 spent plus its prompt) is never sent
    client = make_client(max_tokens=12000)
    u = {"usage": (2000, 400)}
    scripted_llm.push(
        tool_call("PlanReply", {"space": "custom_kernel", "backend": "sycl",
                                "strategy": "LLM plan", "rationale": "memory bound"}, **u),
        reply(f"```python\n{MODULE}```", **u),
        tool_call("CritiqueReply", {"decision": "vary_params", "diagnosis": "tile bigger"}, **u),
        reply(EDIT, **u),
        tool_call("CritiqueReply", {"decision": "vary_params", "diagnosis": "again"}, **u),
        reply("never requested"),
    )

    @contextlib.contextmanager
    def factory(settings, store, run_id):
        yield OptimizeContext(
            settings=settings, store=store, planner=LLMPlanner(client, RulePlan()),
            coder=LLMCoder(client), profiler=RooflineProfiler(PEAKS),
            critic=LLMCritic(client, RuleCritic()), evaluate=evaluate, batch_size=1,
        )

    settings = Settings(data_dir=tmp_path / "d", cache_dir=tmp_path / "c", budget=10)
    report = start_run(TASK, settings, run_id="llm1", context_factory=factory)
    assert report.evaluations == 2 and report.best_speedup == pytest.approx(2.0)
    assert "#define BLOCK 256" in Path(report.kernel_path).read_text()
    state = run_state("llm1", settings)
    assert state["plan"].strategy == "LLM plan"
    assert state["decisions"][0].reason.startswith("tile bigger")
    assert state["decisions"][-1].action == Action.STOP
    assert "token budget spent" in state["decisions"][-1].reason
    assert scripted_llm.remaining == 1 and len(scripted_llm.requests) == 5
    totals = client.ledger.totals()
    assert totals.calls == 5 and totals.total_tokens == 12000
    assert set(client.ledger.per_agent) == {"planner", "coder", "critic"}
