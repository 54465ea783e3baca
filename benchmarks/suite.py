"""Optimise every example task at a fixed budget; compare with PyTorch eager and torch.compile.

Prints, per task: the best correct speedup over eager (harness: interleaved, median, IQR), the
speedup of torch.compile (inductor, CPU) over eager measured the same way in this process, the
best kernel's speedup over torch.compile (the ratio of the two), its roofline fraction and the
evaluations used; then the geometric-mean speedup and fast_1 (share of tasks correct AND faster
than eager) over the suite.

    python benchmarks/suite.py [--budget 12] [--tasks l1_gelu,l2_add_layernorm] [--no-compile]
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import time
from pathlib import Path

import torch

from kernelwright.config import Settings
from kernelwright.graphs.runner import start_run
from kernelwright.spec import Task, derive_contract, run_reference, variant_inputs
from kernelwright.spec.inputs import init_inputs_for

TASKS = Path(__file__).resolve().parents[1] / "examples" / "tasks"


def compile_speedup(task_path: Path, min_time_s: float = 0.3) -> float | None:
    """torch.compile(Model) vs eager, interleaved in this process; None if it fails here."""
    task = Task.from_path(task_path)
    module = task.load_module()
    contract = derive_contract(task)
    torch.manual_seed(0)
    eager = module.Model(*init_inputs_for(module)).eval()
    inputs = variant_inputs(module, contract.nominal, 0)
    try:
        compiled = torch.compile(eager)
        with torch.no_grad():
            got, want = compiled(*inputs), run_reference(module, inputs, 0)
        if not torch.allclose(
            got if isinstance(got, torch.Tensor) else got[0], want[0], atol=1e-3, rtol=1e-3
        ):
            return None
    except Exception as exc:  # inductor unavailable or failing here: say so, don't guess
        print(f"  torch.compile failed on {task.name}: {type(exc).__name__}: {exc}"[:200])
        return None
    ref_t, cmp_t = [], []
    deadline = time.perf_counter() + 2 * min_time_s
    with torch.no_grad():
        while time.perf_counter() < deadline or len(ref_t) < 5:
            for fn, out in ((eager, ref_t), (compiled, cmp_t)):
                start = time.perf_counter()
                fn(*inputs)
                out.append(time.perf_counter() - start)
    return statistics.median(ref_t) / statistics.median(cmp_t)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=12)
    parser.add_argument("--tasks", default="")
    parser.add_argument("--backend", default="sycl")
    parser.add_argument("--no-compile", action="store_true")
    args = parser.parse_args()
    names = args.tasks.split(",") if args.tasks else sorted(p.stem for p in TASKS.glob("*.py"))
    store = Path(tempfile.mkdtemp(prefix="kw-suite-"))
    settings = Settings(budget=args.budget, backend=args.backend, data_dir=store)
    rows = []
    for name in names:
        started = time.time()
        report = start_run(TASKS / f"{name}.py", settings)
        comp = None if args.no_compile else compile_speedup(TASKS / f"{name}.py")
        rows.append((name, report, comp, time.time() - started))
        print(f"  {name}: done in {time.time() - started:.0f}s", flush=True)
    print_table(rows, args.budget)


def print_table(rows, budget: int) -> None:
    header = (
        f"{'task':28} {'correct':>7} {'vs eager [IQR]':>22} {'compile/eager':>13} "
        f"{'vs compile':>10} {'roofline':>8} {'evals':>5}"
    )
    print(f"\nbudget {budget} evaluations per task, backend on this machine\n{header}")
    speedups, fast = [], 0
    for name, r, comp, _ in rows:
        s = r.best_speedup
        vs_eager = f"{s:.2f}x [{r.speedup_low:.2f}-{r.speedup_high:.2f}]" if s else "-"
        vs_comp = f"{s / comp:.2f}x" if s and comp else "-"
        roof = f"{r.roofline_fraction:.1%}" if r.roofline_fraction else "-"
        print(
            f"{name:28} {str(r.correct):>7} {vs_eager:>22} "
            f"{(f'{comp:.2f}x' if comp else 'n/a'):>13} {vs_comp:>10} {roof:>8} "
            f"{r.evaluations:>5}"
        )
        speedups.append(s if s else 1.0)  # an incorrect task counts as the reference (1x)
        fast += bool(r.correct and s and s > 1.0)
    geo = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
    print(f"\ngeometric-mean speedup over eager: {geo:.2f}x (incorrect tasks count as 1.00x)")
    print(f"fast_1: {fast}/{len(rows)} = {fast / len(rows):.0%} of tasks correct and faster")


if __name__ == "__main__":
    main()
