"""Deterministic stand-ins for the agents and the harness (the chat graph alone, no workers)."""

from __future__ import annotations

import contextlib

from kernelwright.agents.critic import RuleCritic
from kernelwright.agents.profiler import RooflineProfiler
from kernelwright.graphs.optimize import OptimizeContext
from kernelwright.spec import Candidate, ImplementationSpace
from kernelwright.spec.opclass import OperatorClass
from kernelwright.spec.peaks import MachinePeaks
from kernelwright.spec.plan import Plan
from kernelwright.spec.result import EvalResult, Level, Timing

PEAKS = MachinePeaks(machine="test", bandwidth_gbps=10.0, gflops=100.0, threads=1)


class FakePlanner:
    def __init__(self) -> None:
        self.calls = 0

    def plan(self, task, contract, backend):
        self.calls += 1
        return Plan(
            operator_class=OperatorClass.ELEMENTWISE,
            implementation_space=ImplementationSpace.CUSTOM_KERNEL,
            backend=backend,
            strategy="try block sizes",
            rationale=f"tolerance seen: {contract.tolerance_for('float32')}",
            sources=["a", "b"],
            flops=1e6,
            min_bytes=1_000_000,
        )


class FakeCoder:
    """Proposes block sizes 1, 2, 3, ... in order (each a child of the previous one)."""

    def propose(self, task, contract, plan, history, n):
        seen = {p.params.get("block") for p in history.profiles}
        blocks = [b for b in range(1, 1000) if b not in seen][:n]
        return [
            Candidate(
                source=f"# block {b}\n",
                backend="torch",
                params={"block": b},
                parent=None
                if b == 1
                else Candidate(
                    source=f"# block {b - 1}\n", backend="torch", params={"block": b - 1}
                ).id,
            )
            for b in blocks
        ]


class FakeEvaluator:
    """Speedup grows with the block size; counts every call."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, task, candidate):
        self.calls.append(candidate.id)
        speed = 1.0 + 0.25 * candidate.params["block"]
        timing = Timing(
            reference_median_s=1e-3,
            reference_iqr_s=1e-5,
            candidate_median_s=1e-3 / speed,
            candidate_iqr_s=1e-5,
            repeats=10,
            speedup=speed,
            speedup_low=speed * 0.95,
            speedup_high=speed * 1.05,
        )
        return EvalResult(
            task_name=task.name,
            candidate_id=candidate.id,
            backend="torch",
            level=Level.CORRECT,
            timing=timing,
        )


def fake_team(evaluator: FakeEvaluator, planner: FakePlanner | None = None, batch_size: int = 2):
    @contextlib.contextmanager
    def factory(settings, store, run_id):
        yield OptimizeContext(
            settings=settings,
            store=store,
            planner=planner or FakePlanner(),
            coder=FakeCoder(),
            profiler=RooflineProfiler(PEAKS),
            critic=RuleCritic(patience=2),
            evaluate=evaluator,
            batch_size=batch_size,
        )

    return factory
