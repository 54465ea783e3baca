"""Warm per-candidate evaluation time and timing spread: BEFORE (a checkout of the old harness)
and AFTER (this tree), measured in one run, side by side.

The same candidates (each example task's naive SYCL candidate plus its lowered program for SYCL
and C++ and ``--variants`` single-parameter schedule changes of the SYCL one, generated once by
this tree's lowering compiler) are evaluated by each tree in its own process (``--measure``, with
``PYTHONPATH`` pointing at that tree). Lowered candidates import
``kernelwright.tools.lower.runtime`` from the tree that runs them: when the old tree has no
lowering (a commit before it landed, such as the pre-sandbox harness 5810585), only the naive
candidates are compared, and the output says so.

1. a warm-up pass (fills that tree's build cache; for the old tree, its recordings too), not
   reported;
2. a measured pass in the same warm pool: per candidate, the wall time of ``pool.evaluate``
   minus the one-time worker/session start, and the timing spread ``IQR / median`` of the
   reference and of the candidate (from ``EvalResult.timing``). SYCL sources get a comment
   line at their end in this pass, as a search's new candidates would differ: the disk
   caches (keyed on preprocessed source) still hit in both trees, but the old pooled worker
   cannot serve the kernel from the previous candidate's process (the new harness never
   can: a fresh runner per candidate).

Trees alternate (before, after, before, after, ...) for ``--repeats`` rounds, so a change in the
machine's load hits both. Targets (issue 10): the warm time per candidate within 1.25x of the
old harness, the spread no worse.

Run::

    git -C /work/main worktree add --detach /work/wt-sandbox-base <old commit>
    PYTHONPATH=$PWD .venv/bin/python benchmarks/eval_overhead.py --before /work/wt-sandbox-base
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASKS = ["l1_gelu", "l1_row_softmax", "l1_matmul"]


def candidates(task: str, variants: int, lowered: bool = True) -> list[tuple[str, str]]:
    """(name, source): the naive example, then (with ``lowered``) the lowered program for SYCL
    and C++ at its default schedule and ``variants`` single-parameter changes of the SYCL one."""
    from kernelwright.spec import Task
    from kernelwright.tools.lower import lower_task

    out = [("naive", (ROOT / "examples/candidates" / f"{task}_naive_sycl.py").read_text())]
    if not lowered:
        return out
    reference = Task.from_path(ROOT / "examples/tasks" / f"{task}.py")
    for backend in ("sycl", "cpp"):
        prog = lower_task(reference, backend)
        out.append((f"lowered.{backend}", prog.candidate.source))
        if backend != "sycl":
            continue
        found = 0
        for name, choices in prog.space.items():
            other = [v for v in choices if v != prog.params[name]]
            if found >= variants or not other:
                continue
            changed = prog.with_params({name: other[0]})
            out.append((f"lowered.sycl:{name}={other[0]}", changed.candidate.source))
            found += 1
    return out


def measure(args: argparse.Namespace) -> None:
    """In the tree on PYTHONPATH: warm-up pass, then the measured pass; print JSON rows."""
    from kernelwright.config import Settings
    from kernelwright.spec import Candidate, Task, guess_backend
    from kernelwright.tools.evaluate import WorkerPool

    scratch = Path(args.scratch)
    os.environ["KERNELWRIGHT_CACHE_DIR"] = str(scratch / "cache")
    settings = Settings(cache_dir=scratch / "cache", data_dir=scratch / "data",
                        min_time_s=args.min_time)
    work = []
    listed = json.loads(Path(args.candidates).read_text())
    for name in args.tasks:
        task = Task.from_path(ROOT / "examples/tasks" / f"{name}.py")
        for cname, source in listed[name]:
            work.append((task, cname, Candidate(source=source, backend=guess_backend(source))))
    rows = []
    with WorkerPool(settings) as pool:
        for passno in ("warmup", "measured"):
            for task, cname, cand in work:
                if passno == "measured":
                    cand = Candidate(source=vary(cand.source), backend=cand.backend)
                t0 = time.monotonic()
                r = pool.evaluate(task, cand)
                wall = time.monotonic() - t0 - r.phases_s.get("worker_start", 0.0)
                if passno == "measured":
                    rows.append(_row(task.name, cname, wall, r))
    print("ROWS " + json.dumps(rows))


def vary(source: str) -> str:
    """``source`` with a comment appended to its SYCL kernel source (the first string
    literal after the SYCL include ends with it); code lines keep their numbers, so the SYCL
    runtime's disk cache (keyed on preprocessed source) still hits."""
    at = source.find("#include <sycl/sycl.hpp>")
    end = source.find('"""', at)
    if at < 0 or end < 0:
        return source
    return source[:end] + "// measured pass\n" + source[end:]


def _row(task: str, name: str, wall: float, r) -> dict:
    t = r.timing
    return {"task": task, "name": name, "wall": wall, "correct": r.correct,
            "speedup": r.speedup, "error": (r.error or "")[:200],
            "ref_spread": t.reference_iqr_s / t.reference_median_s if t else None,
            "cand_spread": t.candidate_iqr_s / t.candidate_median_s if t else None}


def run_tree(tree: Path, args: argparse.Namespace, scratch: Path) -> list[dict]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--measure", "--scratch",
           str(scratch), "--min-time", str(args.min_time), "--candidates", args.candidates,
           "--tasks", *args.tasks]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, cwd=tree)
    for line in proc.stdout.splitlines():
        if line.startswith("ROWS "):
            return json.loads(line[5:])
    raise SystemExit(f"{tree}: no result\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="a checkout of the old harness")
    parser.add_argument("--after", type=Path, default=ROOT)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--min-time", type=float, default=0.2, help="settings.min_time_s")
    parser.add_argument("--variants", type=int, default=1,
                        help="single-parameter schedule variants of the lowered SYCL program")
    parser.add_argument("--tasks", nargs="*", default=TASKS)
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--scratch", help=argparse.SUPPRESS)
    parser.add_argument("--candidates", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args)
        return
    if args.before is None:
        parser.error("--before PATH (a checkout of the old harness) is required")
    base = Path(tempfile.mkdtemp(prefix="kw_bench_"))
    lowered = (args.before / "kernelwright" / "tools" / "lower").is_dir()
    if not lowered:
        print(f"{args.before} has no lowering compiler: comparing the naive candidates only")
    listed = base / "candidates.json"  # generated once, by this tree, for both trees
    listed.write_text(json.dumps({t: candidates(t, args.variants, lowered)
                                  for t in args.tasks}))
    args.candidates = str(listed)
    runs: dict[str, list[list[dict]]] = {"before": [], "after": []}
    for rep in range(args.repeats):
        for label, tree in (("before", args.before), ("after", args.after)):
            runs[label].append(run_tree(tree, args, base / f"{label}{rep}"))
    _print(runs, args)


def _print(runs: dict[str, list[list[dict]]], args: argparse.Namespace) -> None:
    before = [r for rows in runs["before"] for r in rows]
    after = [r for rows in runs["after"] for r in rows]
    print(f"min_time_s={args.min_time}; seconds per candidate (warm: build cache filled, "
          f"session started); {len(runs['after'][0])} candidates x {args.repeats} repeat(s)")
    print(f"{'task':<16}{'candidate':<34}{'ok b/a':>8}{'before':>8}{'after':>8}{'a/b':>7}"
          f"{'x b':>7}{'x a':>7}")
    for b, a in zip(before, after, strict=True):
        ok = f"{'y' if b['correct'] else 'N'}/{'y' if a['correct'] else 'N'}"
        print(f"{a['task']:<16}{a['name'][:33]:<34}{ok:>8}{b['wall']:>8.2f}{a['wall']:>8.2f}"
              f"{a['wall'] / b['wall']:>7.2f}{_fmt(b['speedup']):>7}{_fmt(a['speedup']):>7}")
        if not a["correct"]:
            print(f"    after: {a['error']}")
    both = [(b, a) for b, a in zip(before, after, strict=True) if b["correct"] and a["correct"]]
    mb = statistics.mean(b["wall"] for b, _ in both)
    ma = statistics.mean(a["wall"] for _, a in both)
    print(f"\nwarm per-candidate evaluation time ({len(both)} candidates correct in both): "
          f"before {mb:.2f} s, after {ma:.2f} s, ratio after/before = {ma / mb:.2f}x "
          "(target <= 1.25x)")
    all_b = statistics.mean(r["wall"] for r in before)
    all_a = statistics.mean(r["wall"] for r in after)
    print(f"  all {len(before)} candidates: before {all_b:.2f} s, after {all_a:.2f} s")
    for side in ("ref_spread", "cand_spread"):
        sb = statistics.median(r[side] for r in before if r[side] is not None)
        sa = statistics.median(r[side] for r in after if r[side] is not None)
        print(f"timing spread IQR/median, {side.split('_')[0]:>4} (median over candidates): "
              f"before {sb:.3f}, after {sa:.3f}, ratio after/before = {sa / sb:.2f}x "
              "(target <= 1.00x)")


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


if __name__ == "__main__":
    main()
