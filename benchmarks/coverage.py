"""Coverage of the lowering corpus: per family, how many tasks lower, are correct, beat eager.

For every task of ``tests/corpus/tasks`` (or a subset), at a stated budget:
- lowered: ``lower_task(task, backend)`` returned a program (no ``LoweringError``);
- correct: the harness's verdict on the kernel (every seed and shape variant of the contract);
- faster than eager: the harness's speedup (reference and candidate timed interleaved in the
  same sandboxed worker, median of at least ``min_time_s`` per side) is above 1;
- faster than torch.compile: our speedup over eager is above torch.compile's speedup over eager,
  which this script measures in its own process the same way (interleaved, median), on the same
  nominal inputs; ``n/a`` when torch.compile does not work here (the reason is printed);
- geomean: geometric mean of the speedups over eager of the correct tasks only.

Budget 1 evaluates the lowered kernel as it comes (no search); a larger budget runs the
optimisation loop (``graphs.runner.start_run``) with that many evaluations per task.

    python benchmarks/coverage.py [--backend sycl|cpp|cuda] [--budget 1] [--family gemm]
                                  [--limit N] [--per-family N] [--no-compile] [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType

import torch

from kernelwright.config import Settings
from kernelwright.errors import KernelwrightError
from kernelwright.spec import Task, derive_contract, variant_inputs
from kernelwright.spec.inputs import init_inputs_for

ROOT = Path(__file__).resolve().parents[1]
L2_FAMILIES = ("gemm_epilogue", "conv_epilogue")


def load_corpus() -> ModuleType:
    """``tests/corpus/kw_corpus.py``, imported by path (``tests`` is not a package)."""
    path = ROOT / "tests" / "corpus" / "kw_corpus.py"
    spec = importlib.util.spec_from_file_location("kw_corpus", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class Row:
    task: str
    family: str
    lowered: bool = False
    correct: bool = False
    speedup: float | None = None  # harness: eager median / kernel median
    speedup_low: float | None = None
    speedup_high: float | None = None
    compile_speedup: float | None = None  # torch.compile over eager, measured here
    error: str | None = None
    seconds: float = 0.0

    @property
    def faster_than_eager(self) -> bool:
        return self.correct and self.speedup is not None and self.speedup > 1.0

    @property
    def faster_than_compile(self) -> bool:
        return (self.correct and self.speedup is not None and self.compile_speedup is not None
                and self.speedup > self.compile_speedup)


def lower(task: Task, backend: str):
    """``kernelwright.tools.lower.lower_task`` (imported here: the heavy part of this script)."""
    from kernelwright.tools.lower import lower_task

    return lower_task(task, backend)


def evaluate_lowered(task: Task, backend: str, settings: Settings, row: Row) -> None:
    """Budget 1: lower the task and let the harness verify and time the lowered kernel."""
    from kernelwright.tools.evaluate import WorkerPool

    try:
        program = lower(task, backend)
    except KernelwrightError as exc:  # LoweringError, or a task torch.export cannot capture
        row.error = f"lowering: {exc}"
        return
    row.lowered = True
    with WorkerPool(settings) as pool:
        result = pool.evaluate(task, program.candidate)
    row.correct = result.correct
    if result.correct and result.timing is not None:
        t = result.timing
        row.speedup, row.speedup_low, row.speedup_high = t.speedup, t.speedup_low, t.speedup_high
    elif not result.correct:
        row.error = f"{result.level.name.lower()}: {(result.error or '').strip()[:400]}"


def evaluate_search(task: Task, backend: str, settings: Settings, row: Row) -> None:
    """Budget > 1: whether the task lowers, then the optimisation loop at that budget."""
    from kernelwright.graphs.runner import start_run

    try:
        lower(task, backend)
        row.lowered = True
    except KernelwrightError as exc:
        row.error = f"lowering: {exc}"
    report = start_run(task.path, settings)
    row.correct = report.correct
    row.speedup, row.speedup_low, row.speedup_high = (
        report.best_speedup, report.speedup_low, report.speedup_high)


def compile_vs_eager(task: Task, min_time_s: float) -> tuple[float | None, str | None]:
    """torch.compile's speedup over eager on the nominal inputs, interleaved in this process."""
    module = task.load_module()
    inputs = variant_inputs(module, derive_contract(task).nominal, 0)
    torch.manual_seed(0)
    eager = module.Model(*init_inputs_for(module))
    try:
        compiled = torch.compile(eager)
        with torch.no_grad():
            compiled(*inputs)
    except Exception as exc:  # inductor cannot build here: say so, never guess a number
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
    times: dict[str, list[float]] = {"eager": [], "compiled": []}
    deadline = time.perf_counter() + 2 * min_time_s
    with torch.no_grad():
        while time.perf_counter() < deadline or len(times["eager"]) < 5:
            for name, fn in (("eager", eager), ("compiled", compiled)):
                start = time.perf_counter()
                fn(*inputs)
                times[name].append(time.perf_counter() - start)
    return statistics.median(times["eager"]) / statistics.median(times["compiled"]), None


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summarise(rows: list[Row], compile_ok: bool) -> dict:
    speedups = [r.speedup for r in rows if r.correct and r.speedup]
    return {
        "tasks": len(rows),
        "lowered": sum(r.lowered for r in rows),
        "correct": sum(r.correct for r in rows),
        "faster_than_eager": sum(r.faster_than_eager for r in rows),
        "faster_than_compile": sum(r.faster_than_compile for r in rows) if compile_ok else None,
        "geomean_vs_eager": geomean(speedups),
    }


def table(rows: list[Row], compile_ok: bool) -> dict[str, dict]:
    families = sorted({r.family for r in rows})
    out = {f: summarise([r for r in rows if r.family == f], compile_ok) for f in families}
    l2 = [r for r in rows if r.family in L2_FAMILIES]
    if l2:
        out["L2 fusions"] = summarise(l2, compile_ok)
    out["total"] = summarise(rows, compile_ok)
    return out


def print_report(rows: list[Row], args, settings: Settings, compile_note: str) -> None:
    compile_ok = compile_note == "ok"
    print(f"\nbackend {args.backend}; budget {args.budget} evaluation(s) per task"
          f"{' (the lowered kernel only, no search)' if args.budget == 1 else ''}; timing: "
          f"harness, interleaved, >= {settings.min_time_s:g} s per side; torch.compile: "
          f"{compile_note}")
    head = (f"{'family':16} {'tasks':>5} {'lowered':>7} {'correct':>7} {'>eager':>6} "
            f"{'>compile':>8} {'geomean vs eager':>16}")
    print(head)
    for fam, s in table(rows, compile_ok).items():
        geo = f"{s['geomean_vs_eager']:.2f}x" if s["geomean_vs_eager"] else "-"
        comp = "n/a" if s["faster_than_compile"] is None else s["faster_than_compile"]
        print(f"{fam:16} {s['tasks']:>5} {s['lowered']:>7} {s['correct']:>7} "
              f"{s['faster_than_eager']:>6} {comp:>8} {geo:>16}")
    failed = [r for r in rows if not r.correct]
    if failed:
        print("\nnot correct:")
        for r in failed:
            print(f"  {r.task} ({r.family}): {(r.error or 'no correct kernel').splitlines()[0]}")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="sycl", choices=("sycl", "cpp", "cuda"))
    parser.add_argument("--budget", type=int, default=1, help="evaluations per task")
    parser.add_argument("--family", default=None, help="only this family's tasks")
    parser.add_argument("--limit", type=int, default=None, help="at most this many tasks")
    parser.add_argument("--per-family", type=int, default=None,
                        help="only the first N tasks of every family")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    corpus = load_corpus()
    if args.family and args.family not in corpus.FAMILIES:
        sys.exit(f"unknown family {args.family!r}; choose one of {', '.join(corpus.FAMILIES)}")
    paths = corpus.task_paths(args.family)
    paths = corpus.spread(paths, args.per_family) if args.per_family else paths
    paths = paths[: args.limit] if args.limit else paths
    store = Path(tempfile.mkdtemp(prefix="kw-coverage-"))
    settings = Settings(backend=args.backend, budget=args.budget, data_dir=store)
    compile_note = "not measured (--no-compile)" if args.no_compile else "ok"
    rows: list[Row] = []
    for path in paths:
        started = time.perf_counter()
        task = Task.from_path(path)
        row = Row(task=task.name, family=corpus.family_of(path))
        run = evaluate_lowered if args.budget == 1 else evaluate_search
        run(task, args.backend, settings, row)
        if compile_note == "ok":
            row.compile_speedup, why = compile_vs_eager(task, settings.min_time_s)
            if why is not None and not rows:  # fails on the first task: not usable here
                compile_note = f"n/a ({why})"
        row.seconds = time.perf_counter() - started
        rows.append(row)
        if not args.json:
            speed = f"{row.speedup:.2f}x" if row.speedup else "-"
            print(f"  {row.task}: lowered={row.lowered} correct={row.correct} {speed} "
                  f"({row.seconds:.0f} s)", flush=True)
    if args.json:
        print(json.dumps({
            "backend": args.backend, "budget": args.budget, "min_time_s": settings.min_time_s,
            "torch_compile": compile_note,
            "families": table(rows, compile_note == "ok"),
            "rows": [asdict(r) for r in rows],
        }, indent=2))
    else:
        print_report(rows, args, settings, compile_note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
