"""A quick in-process check of a candidate against its task (for tests and template tuning).

The harness (``kernelwright.tools.evaluate.evaluate``) is the real judge: it runs candidates in a
sandboxed worker with poisoned outputs and guards. This module is the cheap version used by the
example and template test suites and by ``examples/bench_templates.py``: it builds ``Model`` and
``ModelNew`` under the same seed, shares the weights, and compares outputs on every contract
variant; ``time_pair`` times reference and candidate interleaved.

Run ``OMP_WAIT_POLICY=PASSIVE`` when timing: torch's spinning OpenMP threads and the SYCL
runtime's TBB workers otherwise slow each other down (see /work/shared/notes).
"""

from __future__ import annotations

import time
import types
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import torch

from kernelwright.spec import Task, derive_contract, variant_inputs

ROOT = Path(__file__).resolve().parent
TASKS = sorted(p.stem for p in (ROOT / "tasks").glob("*.py"))


@dataclass(frozen=True)
class Check:
    """The outcome of :func:`check`: correct on every variant, and the worst error seen."""

    correct: bool
    max_error: float
    failures: tuple[str, ...]


def task_path(name: str) -> Path:
    return ROOT / "tasks" / f"{name}.py"


@cache
def task_and_contract(name: str):
    """The task ``name`` and its contract, derived once per process."""
    task = Task.from_path(task_path(name))
    return task, derive_contract(task)


def load_source(source: str, name: str = "candidate") -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


def build_pair(task: Task, source: str, seed: int = 0):
    """``(reference model, candidate model)`` built under ``seed`` with shared weights."""
    ref_mod, cand_mod = task.load_module(), load_source(source)
    init = list(ref_mod.get_init_inputs()) if hasattr(ref_mod, "get_init_inputs") else []
    torch.manual_seed(seed)
    ref = ref_mod.Model(*init)
    torch.manual_seed(seed)
    new = cand_mod.ModelNew(*init)
    if set(ref.state_dict()) == set(new.state_dict()):
        new.load_state_dict(ref.state_dict())
    return ref_mod, ref, new


def check(task_name: str, source: str, seeds: tuple[int, ...] = (1,)) -> Check:
    """Compare ``ModelNew`` of ``source`` with the task's ``Model`` on every contract variant."""
    task, contract = task_and_contract(task_name)
    module, ref, new = build_pair(task, source)
    worst, failures = 0.0, []
    for variant in contract.variants:
        for seed in seeds:
            inputs = variant_inputs(module, variant, seed)
            with torch.no_grad():
                want, got = ref(*inputs), new(*inputs)
            tol = contract.tolerance_for(str(want.dtype))
            if got.shape != want.shape:
                failures.append(f"{variant.name}: shape {tuple(got.shape)} != {tuple(want.shape)}")
                continue
            err = float((got - want).abs().max())
            worst = max(worst, err)
            if not torch.allclose(got, want, atol=tol.atol, rtol=tol.rtol):
                failures.append(f"{variant.name} seed {seed}: max error {err:.3g}")
    return Check(correct=not failures, max_error=worst, failures=tuple(failures))


def time_pair(task_name: str, source: str, repeats: int = 30) -> tuple[float, float]:
    """Median ms of reference and candidate on the nominal inputs, timed interleaved."""
    task, contract = task_and_contract(task_name)
    module, ref, new = build_pair(task, source)
    inputs = variant_inputs(module, contract.nominal, 0)
    t_ref, t_new = [], []
    with torch.no_grad():
        for _ in range(3):
            ref(*inputs), new(*inputs)
        for _ in range(repeats):
            t0 = time.perf_counter()
            ref(*inputs)
            t1 = time.perf_counter()
            new(*inputs)
            t_new.append(time.perf_counter() - t1)
            t_ref.append(t1 - t0)
    return sorted(t_ref)[repeats // 2] * 1e3, sorted(t_new)[repeats // 2] * 1e3
