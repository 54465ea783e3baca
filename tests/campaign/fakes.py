"""A fake team for campaigns: per-task improvement curves, call counting, optional LLM usage."""

from __future__ import annotations

import contextlib
import json

from kernelwright.agents.critic import RuleCritic
from kernelwright.agents.profiler import RooflineProfiler
from kernelwright.graphs.optimize import OptimizeContext
from kernelwright.spec import Candidate, ImplementationSpace
from kernelwright.spec.opclass import OperatorClass
from kernelwright.spec.peaks import MachinePeaks
from kernelwright.spec.plan import Plan
from kernelwright.spec.result import EvalResult, Level, Timing

PEAKS = MachinePeaks(machine="test", bandwidth_gbps=10.0, gflops=100.0, threads=1)


class Planner:
    def plan(self, task, contract, backend):
        return Plan(operator_class=OperatorClass.ELEMENTWISE,
                    implementation_space=ImplementationSpace.CUSTOM_KERNEL, backend=backend,
                    strategy="blocks", rationale="test", sources=["a"], flops=1e6,
                    min_bytes=1_000_000)  # fmt: skip


class Coder:
    def propose(self, task, contract, plan, history, n):
        seen = {p.params.get("block") for p in history.profiles}
        blocks = [b for b in range(1, 1000) if b not in seen][:n]
        return [Candidate(source=f"# {task.name} {b}\n", backend="torch", params={"block": b})
                for b in blocks]  # fmt: skip


class Evaluator:
    """``curves[task name](block) -> speedup``; raises after ``crash_after`` calls if set."""

    def __init__(self, curves, crash_after: int | None = None) -> None:
        self.curves = curves
        self.calls: list[tuple[str, str]] = []
        self.crash_after = crash_after

    def __call__(self, task, candidate):
        if self.crash_after is not None and len(self.calls) >= self.crash_after:
            raise KeyboardInterrupt("simulated kill")
        self.calls.append((task.name, candidate.id))
        speed = self.curves[task.name](candidate.params["block"])
        timing = Timing(reference_median_s=1e-3, reference_iqr_s=1e-5,
                        candidate_median_s=1e-3 / speed, candidate_iqr_s=1e-5, repeats=10,
                        speedup=speed,
                        speedup_low=speed * 0.9, speedup_high=speed * 1.1)  # fmt: skip
        return EvalResult(task_name=task.name, candidate_id=candidate.id, backend="torch",
                          level=Level.CORRECT, timing=timing)  # fmt: skip


def team(evaluator: Evaluator, tokens_per_eval: int = 0):
    @contextlib.contextmanager
    def factory(settings, store, run_id):
        def evaluate(task, candidate):
            result = evaluator(task, candidate)
            if tokens_per_eval:  # what an LLM team's ledger would hold
                done = len(store.evaluations(run_id)) + 1
                usage = {
                    "per_agent": {
                        "coder": {
                            "input_tokens": tokens_per_eval * done,
                            "output_tokens": 0,
                            "cost_usd": 0.0,
                        }
                    }
                }
                store.save_usage(run_id, json.dumps(usage))
            return result

        yield OptimizeContext(settings=settings, store=store, planner=Planner(), coder=Coder(),
                              profiler=RooflineProfiler(PEAKS), critic=RuleCritic(patience=50),
                              evaluate=evaluate, batch_size=2)  # fmt: skip

    return factory
