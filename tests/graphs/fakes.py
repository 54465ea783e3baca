"""Deterministic stand-ins for the agents and the harness, to test the graph alone."""

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
    def plan(self, task, contract, backend):
        return Plan(
            operator_class=OperatorClass.ELEMENTWISE,
            implementation_space=ImplementationSpace.CUSTOM_KERNEL,
            backend=backend,
            strategy="try block sizes",
            rationale="test",
            sources=["a", "b"],
            flops=1e6,
            min_bytes=1_000_000,
        )


class FakeCoder:
    """Proposes block sizes 1, 2, 3, ... in order; never repeats one already profiled."""

    def propose(self, task, contract, plan, history, n):
        seen = {p.params.get("block") for p in history.profiles}
        blocks = [b for b in range(1, 1000) if b not in seen][:n]
        return [
            Candidate(
                source=f"# block {b}",
                backend="torch",
                params={"block": b},
                origin="a" if b < 4 else "b",
            )
            for b in blocks
        ]


class FakeEvaluator:
    """Speedup peaks at block 5; counts every call; optionally fails after ``crash_after``."""

    def __init__(self, crash_after: int | None = None) -> None:
        self.calls: list[str] = []
        self.crash_after = crash_after

    def __call__(self, task, candidate):
        if self.crash_after is not None and len(self.calls) >= self.crash_after:
            raise KeyboardInterrupt("simulated crash")
        self.calls.append(candidate.id)
        block = candidate.params["block"]
        speed = 1.0 + 0.5 * (5 - abs(5 - block))
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


def fake_context_factory(evaluator: FakeEvaluator, batch_size: int = 2):
    @contextlib.contextmanager
    def factory(settings, store, run_id):
        yield OptimizeContext(
            settings=settings,
            store=store,
            planner=FakePlanner(),
            coder=FakeCoder(),
            profiler=RooflineProfiler(PEAKS),
            critic=RuleCritic(patience=2),
            evaluate=evaluator,
            batch_size=batch_size,
        )

    return factory


def timed_result(task, candidate, ref_ms: float, cand_ms: float) -> EvalResult:
    """A correct result with these medians (ms) and a tight spread."""
    timing = Timing(reference_median_s=ref_ms / 1e3, reference_iqr_s=1e-6,
                    candidate_median_s=cand_ms / 1e3, candidate_iqr_s=1e-6, repeats=10,
                    speedup=ref_ms / cand_ms, speedup_low=0.9 * ref_ms / cand_ms,
                    speedup_high=1.1 * ref_ms / cand_ms)  # fmt: skip
    return EvalResult(task_name=task.name, candidate_id=candidate.id, backend="torch",
                      level=Level.CORRECT, timing=timing)
