"""Coverage of a task corpus: per family, how many tasks lower, are correct, beat eager and
torch.compile.

For every task of ``tests/corpus/tasks`` (or ``--tasks DIR``, any directory of KernelBench-format
files), at a stated budget:
- lowered: ``lower_task(task, backend)`` returned a program (no ``LoweringError``);
- correct: the harness's verdict on the kernel (every seed and shape variant of the contract);
- faster than eager: the harness's speedup (reference and candidate timed interleaved in the
  same sandboxed session, median of at least ``min_time_s`` per side) is above 1;
- faster than torch.compile: the harness also times ``torch.compile`` of the reference, in the
  trusted reference runner, with the same inputs and clock, at steady state after warm-up
  calls (compiling is never timed), recompiles counted; the kernel beats it when torch.compile's
  median is above the kernel's (both on one reference's scale, see
  ``kernelwright/tools/evaluate/compile_timing.py``); ``-`` where torch.compile failed;
- geomean vs eager / vs torch.compile: geometric means over the correct tasks (of eager's median
  over the kernel's, and of torch.compile's median over the kernel's);
- load: the 1-minute load average sampled before the run and after every task (min/mean/max):
  the machine is shared, and a ratio measured under load says so.

Budget 1 evaluates the lowered kernel as the planner hands it to the search (no search; where a
group may be our kernel or a library call, both timed and the faster kept); a larger budget runs
the optimisation loop (``graphs.runner.start_run``) with that many evaluations per task; its
figures are the run's re-measured ones (the top candidates and the reference in interleaved
rounds, with torch.compile beside them), and ``ref chosen`` is the share of tasks whose answer
is the reference itself (keep PyTorch; only when the framework space is allowed). Every other
column describes the best kernel, never the reference.

``--spaces all|custom``: the implementation spaces every task allows (custom kernels only, or
custom kernels, vendor libraries and the framework). Each task is copied into a temporary
directory with that ``ALLOWED_SPACES`` (what a task file says; this branch has no ``--spaces``
option of the CLI to pass it through); ``--spaces task`` keeps what each file says.

    python benchmarks/corpus_coverage.py [--tasks DIR] [--spaces all|custom|task]
                                  [--backend sycl|cpp|cuda] [--budget 1] [--family gemm]
                                  [--limit N] [--per-family N] [--no-compile] [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import statistics
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType

from kernelwright.config import Settings
from kernelwright.errors import KernelwrightError
from kernelwright.spec import Task

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
    compile_speedup: float | None = None  # torch.compile over eager (harness)
    vs_compile: float | None = None  # torch.compile's median over the kernel's (harness)
    compile_recompiles: int | None = None
    reference_ms: float | None = None
    candidate_ms: float | None = None
    compile_ms: float | None = None
    error: str | None = None
    seconds: float = 0.0
    answer: str | None = None  # budget > 1: "kernel" | "reference" | "none" (RunReport.answer)
    remeasured: bool = False  # the figures come from the run's interleaved re-measurement
    spaces: list[str] | None = None  # budget 1: the measured choice per group, where one was

    @property
    def faster_than_eager(self) -> bool:
        return self.correct and self.speedup is not None and self.speedup > 1.0

    @property
    def faster_than_compile(self) -> bool:
        return self.correct and self.vs_compile is not None and self.vs_compile > 1.0

    def take_timing(self, t) -> None:
        """The harness's figures of one evaluation (``Timing``)."""
        self.speedup, self.speedup_low, self.speedup_high = t.speedup, t.speedup_low, \
            t.speedup_high
        self.reference_ms, self.candidate_ms, self.compile_ms = (t.reference_ms, t.candidate_ms,
                                                                 t.compile_ms)
        self.vs_compile = t.speedup_vs_compile
        self.compile_recompiles = t.compile_recompiles
        if t.compile_median_s:
            self.compile_speedup = t.reference_median_s / t.compile_median_s


def lower(task: Task, backend: str):
    """``kernelwright.tools.lower.lower_task`` (imported here: the heavy part of this script)."""
    from kernelwright.tools.lower import lower_task

    return lower_task(task, backend)


def with_chosen_spaces(program, row: Row):
    """The program the planner hands the search: where a group may run as our kernel or as a
    library call, each option timed and the fastest kept (``tools.lower.choose``)."""
    from kernelwright.tools.lower.choose import choose_spaces

    if not any(k.endswith(".impl") for k in program.space):
        return program
    params, groups, _ = choose_spaces(program)
    row.spaces = [f"{g.group} {g.kind}: {g.form}" for g in groups if g.timings_ms]
    return program.with_params(params)


def evaluate_lowered(task: Task, backend: str, settings: Settings, row: Row) -> None:
    """Budget 1: lower the task and let the harness verify and time the lowered kernel."""
    from kernelwright.tools.evaluate import WorkerPool

    try:
        program = lower(task, backend)
    except KernelwrightError as exc:  # LoweringError, or a task torch.export cannot capture
        row.error = f"lowering: {exc}"
        return
    row.lowered = True
    program = with_chosen_spaces(program, row)
    with WorkerPool(settings) as pool:
        result = pool.evaluate(task, program.candidate)
    row.correct = result.correct
    if result.correct and result.timing is not None:
        row.take_timing(result.timing)
        why = (result.observations.get("torch_compile") or {}).get("error")
        if why and row.compile_ms is None:
            row.error = f"torch.compile: {why.splitlines()[0][:200]}"
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
    row.reference_ms, row.candidate_ms, row.compile_ms = (
        report.reference_ms, report.candidate_ms, report.compile_ms)
    row.vs_compile, row.compile_recompiles = report.speedup_vs_compile, report.compile_recompiles
    row.answer, row.remeasured = report.answer, report.remeasured
    if report.compile_ms and report.reference_ms:
        row.compile_speedup = report.reference_ms / report.compile_ms


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summarise(rows: list[Row], compile_ok: bool) -> dict:
    speedups = [r.speedup for r in rows if r.correct and r.speedup]
    vs_compile = [r.vs_compile for r in rows if r.correct and r.vs_compile]
    return {
        "tasks": len(rows),
        "lowered": sum(r.lowered for r in rows),
        "correct": sum(r.correct for r in rows),
        "faster_than_eager": sum(r.faster_than_eager for r in rows),
        "faster_than_compile": sum(r.faster_than_compile for r in rows) if compile_ok else None,
        "compile_timed": len(vs_compile),
        "geomean_vs_eager": geomean(speedups),
        "geomean_vs_compile": geomean(vs_compile) if compile_ok else None,
        # the share of tasks whose answer is the reference itself (keep PyTorch); budget > 1
        "answered": sum(r.answer is not None for r in rows),
        "reference_chosen": sum(r.answer == "reference" for r in rows),
        "remeasured": sum(r.remeasured for r in rows),
    }


def table(rows: list[Row], compile_ok: bool) -> dict[str, dict]:
    families = sorted({r.family for r in rows})
    out = {f: summarise([r for r in rows if r.family == f], compile_ok) for f in families}
    l2 = [r for r in rows if r.family in L2_FAMILIES]
    if l2:
        out["L2 fusions"] = summarise(l2, compile_ok)
    out["total"] = summarise(rows, compile_ok)
    return out


def load_text(loads: list[float]) -> str:
    if not loads:
        return "load average: not sampled"
    return (f"load average (1 min) while it ran: min {min(loads):.1f}, mean "
            f"{statistics.mean(loads):.1f}, max {max(loads):.1f} on {os.cpu_count()} cores")


def print_report(rows: list[Row], args, settings: Settings, compile_note: str,
                 loads: list[float]) -> None:
    compile_ok = compile_note == "ok"
    lowered_only = " (the lowered kernel, spaces chosen by timing, no search)"
    print(f"\nbackend {args.backend}; spaces {args.spaces}; budget {args.budget} evaluation(s) "
          f"per task{lowered_only if args.budget == 1 else ''}; "
          f"timing: harness, interleaved, >= {settings.min_time_s:g} s per side; "
          f"torch.compile: {compile_note}")
    print(load_text(loads))
    if args.budget > 1:
        print(f"figures: the kernels' re-measured ones (the top {settings.confirm_top} and the "
              f"reference in {settings.confirm_rounds} interleaved rounds); 'ref chosen': "
              "tasks whose answer is the reference itself (keep PyTorch); the other columns "
              "describe the best kernel")
    head = (f"{'family':16} {'tasks':>5} {'lowered':>7} {'correct':>7} {'>eager':>6} "
            f"{'>compile':>8} {'geomean vs eager':>16} {'geomean vs compile':>18} "
            f"{'ref chosen':>10}")
    print(head)
    for fam, s in table(rows, compile_ok).items():
        geo = f"{s['geomean_vs_eager']:.2f}x" if s["geomean_vs_eager"] else "-"
        geo_c = f"{s['geomean_vs_compile']:.2f}x" if s["geomean_vs_compile"] else "-"
        comp = ("n/a" if s["faster_than_compile"] is None else
                f"{s['faster_than_compile']}/{s['compile_timed']}")
        ref = (f"{s['reference_chosen'] / s['answered']:.0%}" if s["answered"] else "-")
        print(f"{fam:16} {s['tasks']:>5} {s['lowered']:>7} {s['correct']:>7} "
              f"{s['faster_than_eager']:>6} {comp:>8} {geo:>16} {geo_c:>18} {ref:>10}")
    failed = [r for r in rows if not r.correct]
    if failed:
        print("\nnot correct:")
        for r in failed:
            lines = [ln.strip() for ln in (r.error or "no correct kernel").splitlines()]
            why = " | ".join(ln for ln in lines if ln)  # the cause is often past line one
            print(f"  {r.task} ({r.family}): {why[:400]}")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=None,
                        help="a directory of KernelBench-format task files (default: the "
                             "corpus, tests/corpus/tasks)")
    parser.add_argument("--spaces", default="custom", choices=("all", "custom", "task"),
                        help="allowed implementation spaces: all (custom, vendor, framework), "
                             "custom (custom kernels only), task (what each file says)")
    parser.add_argument("--backend", default="sycl", choices=("sycl", "cpp", "cuda"))
    parser.add_argument("--budget", type=int, default=1, help="evaluations per task")
    parser.add_argument("--family", default=None, help="only this family's tasks")
    parser.add_argument("--limit", type=int, default=None, help="at most this many tasks")
    parser.add_argument("--per-family", type=int, default=None,
                        help="only the first N tasks of every family")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--min-time", type=float, default=None,
                        help="seconds measured per side (default: Settings.min_time_s)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return parser.parse_args(argv)


SPACES = {"all": ["custom_kernel", "vendor_library", "framework"], "custom": ["custom_kernel"]}


def task_files(args, corpus) -> list[Path]:
    """The task files to run: ``--tasks DIR`` (every ``*.py`` but ``__init__``) or the corpus."""
    if args.tasks is not None:
        if not args.tasks.is_dir():
            sys.exit(f"--tasks {args.tasks}: not a directory; give a directory of task files")
        paths = sorted(p for p in args.tasks.glob("*.py") if p.name != "__init__.py")
        if not paths:
            sys.exit(f"--tasks {args.tasks}: no *.py task files in it")
        paths = [p for p in paths if not args.family or family_guess(p, corpus) == args.family]
    else:
        paths = corpus.task_paths(args.family)
    paths = corpus.spread(paths, args.per_family) if args.per_family else paths
    return paths[: args.limit] if args.limit else paths


def family_guess(path: Path, corpus) -> str:
    """The file's ``FAMILY`` constant, else a guess from its name (KernelBench names say what
    they compute: ``12_Gemm_Multiply_LeakyReLU``); a level-2 directory makes an epilogue."""
    family = corpus.family_of(path)
    if family:
        return family
    name = path.stem.lower()
    level2 = any("level2" in part.lower() for part in path.parts)
    for base, words in (("conv", ("conv",)), ("gemm", ("gemm", "matmul", "matrix", "bmm",
                                                          "linear", "mm_", "einsum"))):
        if any(w in name for w in words):
            return f"{base}_epilogue" if level2 else base
    for fam in ("softmax", "norm", "pool", "loss", "scan", "reduction"):
        if fam in name:
            return {"pool": "pooling"}.get(fam, fam)
    if any(w in name for w in ("relu", "gelu", "sigmoid", "tanh", "elu", "swish", "silu",
                               "softplus", "softsign", "hardtanh", "mish")):
        return "pointwise"
    return "other"


def with_spaces(path: Path, spaces: str, into: Path) -> Path:
    """``path`` copied into ``into`` with ``ALLOWED_SPACES`` set (the file's own for "task")."""
    if spaces == "task":
        return path
    copy = into / path.name
    copy.write_text(path.read_text() + f"\n\nALLOWED_SPACES = {SPACES[spaces]!r}  "
                                       "# set by benchmarks/corpus_coverage.py --spaces\n")
    return copy


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    corpus = load_corpus()
    if args.family and args.tasks is None and args.family not in corpus.FAMILIES:
        sys.exit(f"unknown family {args.family!r}; choose one of {', '.join(corpus.FAMILIES)}")
    paths = task_files(args, corpus)
    store = Path(tempfile.mkdtemp(prefix="kw-coverage-"))
    copies = store / "tasks"
    copies.mkdir()
    timing = {"min_time_s": args.min_time} if args.min_time else {}
    settings = Settings(backend=args.backend, budget=args.budget, data_dir=store,
                        time_compile=not args.no_compile, confirm_compile=not args.no_compile,
                        **timing)
    compile_note = "not measured (--no-compile)" if args.no_compile else "ok"
    rows: list[Row] = []
    loads = [os.getloadavg()[0]]
    for path in paths:
        started = time.perf_counter()
        task = Task.from_path(with_spaces(path, args.spaces, copies))
        row = Row(task=task.name, family=family_guess(path, corpus))
        run = evaluate_lowered if args.budget == 1 else evaluate_search
        try:
            run(task, args.backend, settings, row)
        except KernelwrightError as exc:  # one task's failure is a row, not the end
            row.error = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # noqa: BLE001 - a bug is a row too, named as one
            at = traceback.extract_tb(exc.__traceback__)[-1]
            row.error = (f"internal error, please report: {type(exc).__name__}: {exc} "
                         f"({at.filename}:{at.lineno})")
        row.seconds = time.perf_counter() - started
        rows.append(row)
        loads.append(os.getloadavg()[0])
        if not args.json:
            speed = f"{row.speedup:.2f}x" if row.speedup else "-"
            comp = (f", torch.compile {row.compile_speedup:.2f}x of eager, kernel "
                    f"{row.vs_compile:.2f}x of torch.compile" if row.vs_compile else "")
            ms = (f" (eager {row.reference_ms:.3f} ms, kernel {row.candidate_ms:.3f} ms)"
                  if row.reference_ms and row.candidate_ms else "")
            chose = f"; chose {', '.join(row.spaces)}" if row.spaces else ""
            print(f"  {row.task}: lowered={row.lowered} correct={row.correct} {speed}{ms}"
                  f"{comp}{chose} ({row.seconds:.0f} s)", flush=True)
    if args.json:
        print(json.dumps({
            "backend": args.backend, "budget": args.budget, "spaces": args.spaces,
            "tasks": str(args.tasks or corpus.TASK_DIR), "min_time_s": settings.min_time_s,
            "torch_compile": compile_note,
            "load_average": {"min": min(loads), "mean": statistics.mean(loads),
                             "max": max(loads), "cores": os.cpu_count()},
            "families": table(rows, compile_note == "ok"),
            "rows": [asdict(r) for r in rows],
        }, indent=2))
    else:
        print_report(rows, args, settings, compile_note, loads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
