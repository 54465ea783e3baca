"""Run stores for the report tests: scripted runs (fast, with hostile text) and one real run."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from pathlib import Path

import pytest

from kernelwright.agents.critic import RuleCritic
from kernelwright.agents.profiler import RooflineProfiler
from kernelwright.config import Settings
from kernelwright.graphs.optimize import OptimizeContext
from kernelwright.graphs.runner import start_run
from kernelwright.graphs.store import RunStore
from kernelwright.spec import Candidate, ImplementationSpace
from kernelwright.spec.opclass import OperatorClass
from kernelwright.spec.peaks import MachinePeaks
from kernelwright.spec.plan import Plan
from kernelwright.spec.result import EvalResult, Flag, Level, Timing, VariantCheck

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "examples" / "tasks" / "l1_gelu.py"
PEAKS = MachinePeaks(machine="test", bandwidth_gbps=10.0, gflops=100.0, threads=1)
HOSTILE = '<script>console.error("xss")</script><img src=x onerror="console.error(1)">'


class ScriptedPlanner:
    def plan(self, task, contract, backend):
        return Plan(
            operator_class=OperatorClass.ELEMENTWISE,
            implementation_space=ImplementationSpace.CUSTOM_KERNEL,
            backend=backend,
            strategy=f"try block sizes {HOSTILE}",
            rationale="test",
            sources=["a"],
            flops=1e6,
            min_bytes=1_000_000,
        )


class ScriptedCoder:
    """Block sizes 1, 2, 3, ... each the parent of the next; sources carry hostile text."""

    def propose(self, task, contract, plan, history, n):
        seen = {p.params.get("block") for p in history.profiles}
        blocks = [b for b in range(1, 100) if b not in seen][:n]
        parent = history.best.candidate_id if history.best else None
        return [
            Candidate(
                source=f"# block {b}\n# {HOSTILE}\nBLOCK = {b}\n```\n",
                backend="torch",
                params={"block": b},
                origin="a",
                parent=parent,
            )
            for b in blocks
        ]


def scripted_result(task, candidate) -> EvalResult:
    """Speedup 1 + 0.5 b for blocks up to 4; block 3 is wrong (value mismatch, hostile error)."""
    block = candidate.params["block"]
    common = {"task_name": task.name, "candidate_id": candidate.id, "backend": "torch"}
    if block == 3:
        return EvalResult(**common, level=Level.VALUE_MISMATCH, error=f"mismatch {HOSTILE}",
                          flags=[Flag.NONDETERMINISTIC])  # fmt: skip
    speed = 1.0 + 0.5 * min(block, 4)
    timing = Timing(
        reference_median_s=1e-3, reference_iqr_s=1e-5, candidate_median_s=1e-3 / speed,
        candidate_iqr_s=1e-5, repeats=10, speedup=speed, speedup_low=speed * 0.9,
        speedup_high=speed * 1.1,
    )  # fmt: skip
    variants = [VariantCheck(variant=v, seeds=3, ok=True, max_abs_error=1e-6)
                for v in ("nominal", "odd")]  # fmt: skip
    return EvalResult(**common, level=Level.CORRECT, timing=timing, variants=variants,
                      device="test device")  # fmt: skip


@contextlib.contextmanager
def scripted_team(settings, store, run_id):
    yield OptimizeContext(
        settings=settings,
        store=store,
        planner=ScriptedPlanner(),
        coder=ScriptedCoder(),
        profiler=RooflineProfiler(PEAKS),
        critic=RuleCritic(patience=5),
        evaluate=scripted_result,
        batch_size=2,
    )


def slow_result(task, candidate) -> EvalResult:
    """A run that never beats eager: block 1 at 0.98x, every other block at 0.5x; torch.compile
    measured at 0.8 ms (eager = speedup ms, kernel = 1 ms)."""
    speed = 0.98 if candidate.params["block"] == 1 else 0.5
    timing = Timing(
        reference_median_s=1e-3 * speed, reference_iqr_s=1e-5, candidate_median_s=1e-3,
        candidate_iqr_s=1e-5, repeats=10, speedup=speed, speedup_low=speed * 0.9,
        speedup_high=speed * 1.1, compile_median_s=8e-4,
    )  # fmt: skip
    return EvalResult(task_name=task.name, candidate_id=candidate.id, backend="torch",
                      level=Level.CORRECT, timing=timing, device="test device")  # fmt: skip


@contextlib.contextmanager
def slow_team(settings, store, run_id):
    with scripted_team(settings, store, run_id) as context:
        yield dataclasses.replace(context, evaluate=slow_result)


USAGE = {
    "per_agent": {
        "coder": {"calls": 3, "input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.0024},
        HOSTILE: {"calls": 1, "input_tokens": 10, "output_tokens": 5, "cost_usd": None},
    }
}


@pytest.fixture(scope="session")
def scripted_store(tmp_path_factory) -> Path:
    """Two scripted runs: 'good' (6 evaluations, LLM usage) and 'hostile' (task name is HTML)."""
    root = tmp_path_factory.mktemp("scripted-store")
    settings = Settings(data_dir=root, cache_dir=root / "cache", budget=6)
    for run_id in ("good", "hostile"):
        start_run(TASK, settings, run_id=run_id, context_factory=scripted_team)
    store = RunStore(root)
    store.update_meta("hostile", task=HOSTILE)
    store.save_usage("good", json.dumps(USAGE))
    return root


@pytest.fixture(scope="session")
def slow_store(tmp_path_factory) -> Path:
    """One scripted run, 'slow', whose best correct kernel is 0.98x: keep PyTorch."""
    root = tmp_path_factory.mktemp("slow-store")
    settings = Settings(data_dir=root, cache_dir=root / "cache", budget=3)
    start_run(TASK, settings, run_id="slow", context_factory=slow_team)
    return root


@pytest.fixture(scope="session")
def real_store(tmp_path_factory) -> Path:
    """One real optimisation run: the cpp backend, three evaluations (about 15 s)."""
    root = tmp_path_factory.mktemp("real-store")
    settings = Settings(data_dir=root, cache_dir=root / "cache", backend="cpp", budget=3)
    start_run(TASK, settings, run_id="real")
    return root


@pytest.fixture
def artifacts(tmp_path) -> Path:
    """Where screenshots go: $KERNELWRIGHT_TEST_ARTIFACTS if set (kept), else tmp_path."""
    where = os.environ.get("KERNELWRIGHT_TEST_ARTIFACTS")
    path = Path(where) if where else tmp_path
    path.mkdir(parents=True, exist_ok=True)
    return path
