"""Every task file of a directory through contract derivation and, optionally, the lowering.

For each file, in its own process (a crash, a hang or a runaway allocation costs that row
only): derive the contract (the shape variants kernelwright checks candidates on, with no
``get_shape_variants``) and, with ``--backend``, lower the reference, build the lowered
candidate and run it beside eager on the nominal inputs. The error of each is the normwise
relative error against the reference run in float64 (eager's own error is the yardstick:
a row matches when ours is within ten times eager's, or under 1e-5); where the model cannot
run in float64, eager is the reference. No timing: ``corpus_coverage.py`` times through the
harness.

    python benchmarks/kernelbench_sweep.py --tasks /tmp/kb-all [--backend cpp] [--timeout 600]

Files come from ``kernelbench_cpu.py`` (scaled KernelBench problems) or any directory of
KernelBench-format files.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path


def sweep_one(path: str, backend: str | None, row: dict) -> None:
    """Fill ``row`` for one file (in the worker process); ``row["stage"]`` says how far it
    got should anything raise."""
    import torch

    from kernelwright.spec import Task, derive_contract

    row["stage"] = "contract"
    t0 = time.perf_counter()
    task = Task.from_path(path)
    contract = derive_contract(task)
    row["variants"] = len(contract.variants)
    row["fixed_shapes"] = contract.fixed_shapes_reason is not None
    row["contract_s"] = round(time.perf_counter() - t0, 1)
    if backend is None:
        return
    from kernelwright.tools.lower import lower_task
    from kernelwright.tools.lower.in_process import built_candidate

    row["stage"] = "lower"
    t0 = time.perf_counter()
    prog = lower_task(task, backend, contract=contract)
    row["lower_s"] = round(time.perf_counter() - t0, 1)
    row["stage"] = "run"
    module = task.module()
    ours, ref = built_candidate(prog, module)
    torch.manual_seed(1)
    inputs = module.get_inputs()
    with torch.no_grad():
        want = _outputs(ref(*[x.clone() if torch.is_tensor(x) else x for x in inputs]))
        got = _outputs(ours(*inputs))
        exact = _float64_outputs(ref, inputs)
    truth = exact if exact is not None else want
    row["reference"] = "float64" if exact is not None else "eager"
    row["eager_err"] = _normwise(want, truth)
    row["ours_err"] = _normwise(got, truth)
    row["match"] = (len(got) == len(truth)
                    and row["ours_err"] <= max(1e-5, 10 * row["eager_err"]))
    row["stage"] = "done"


def _outputs(value) -> list:
    return list(value) if isinstance(value, tuple | list) else [value]


def _float64_outputs(ref, inputs) -> list | None:
    """The reference's outputs computed in float64, or None where it cannot run so."""
    import copy

    import torch

    try:
        wide = copy.deepcopy(ref).double()
        return _outputs(wide(*[x.double() if torch.is_tensor(x) and x.is_floating_point()
                               else x for x in inputs]))
    except Exception:  # integer indexing, dtype-fixed buffers: compare with eager instead
        return None


def _normwise(got: list, truth: list) -> float:
    """max over outputs of ``||got - truth|| / ||truth||`` (absolute where truth is zero)."""
    worst = 0.0
    for g, t in zip(got, truth, strict=False):
        if tuple(g.shape) != tuple(t.shape):
            return float("inf")
        if not g.is_floating_point():
            worst = max(worst, float((g != t.to(g.dtype)).any()))
            continue
        diff = float((g.double() - t.double()).norm())
        scale = float(t.double().norm())
        worst = max(worst, diff / scale if scale else diff)
    return worst


def sweep(tasks: Path, backend: str | None, timeout: int) -> list[dict]:
    rows = []
    for path in sorted(tasks.glob("*.py")):
        cmd = [sys.executable, __file__, "--one", str(path)]
        cmd += ["--backend", backend] if backend else []
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
            row = (json.loads(lines[-1]) if lines else
                   {"file": path.stem, "error": f"worker exited {done.returncode}: "
                    f"{done.stderr.strip().splitlines()[-1:] or ['no output']}"})
        except subprocess.TimeoutExpired:
            row = {"file": path.stem, "error": f"no answer within {timeout} s"}
        rows.append(row)
        print(_line(row), flush=True)
    return rows


def _line(row: dict) -> str:
    if "error" in row:
        return f"  {row['file']}: {row.get('stage', '')} failed: {row['error'][:300]}"
    text = f"  {row['file']}: {row['variants']} shape set(s)"
    text += " (fixed shapes)" if row["fixed_shapes"] else ""
    if "match" in row:
        text += (f"; lowered, ours {row['ours_err']:.1e} / eager {row['eager_err']:.1e} "
                 f"vs {row['reference']}: {'match' if row['match'] else 'MISMATCH'}")
    return text


def summary(rows: list[dict], backend: str | None) -> str:
    derived = [r for r in rows if "variants" in r]
    parts = [f"{len(rows)} files", f"{len(derived)} contracts derived",
             f"{sum(r['variants'] >= 3 for r in derived)} with two scaled variants"]
    if backend:
        ran = [r for r in rows if "match" in r]
        parts += [f"{len(ran)} lowered and run", f"{sum(r['match'] for r in ran)} match"]
    failed = Counter(r.get("stage", "start") for r in rows if "error" in r)
    parts += [f"{v} failed at {k}" for k, v in failed.items()]
    return ", ".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=Path, help="a directory of KernelBench-format files")
    ap.add_argument("--backend", choices=["cpp", "sycl", "cuda"],
                    help="also lower each task and run it beside eager")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per file")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # worker mode: one file, one JSON line
    args = ap.parse_args()
    if args.one:
        row: dict = {"file": Path(args.one).stem}
        try:
            sweep_one(args.one, args.backend, row)
        except Exception as exc:
            row["error"] = f"{type(exc).__name__}: {exc}"[:1000]
        print(json.dumps(row))
        return
    if args.tasks is None or not args.tasks.is_dir():
        ap.error("--tasks must name a directory of task files")
    rows = sweep(args.tasks, args.backend, args.timeout)
    print(summary(rows, args.backend))


if __name__ == "__main__":
    main()
