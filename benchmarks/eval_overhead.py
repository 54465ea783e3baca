"""Mean per-candidate evaluation time: cold vs warm build cache vs warm cache + record-replay.

Over the same candidates (each example task's naive SYCL candidate plus template-rendered
variants from ``kernelwright.templates``), in one run and in this order:

(a) cold: a new worker per candidate, an empty build cache, no recording (record_replay off);
(b) warm: the build cache (a) filled, one warm worker per task, record_replay off;
(c) replay: warm cache, one warm worker per task, record_replay on; the first candidate of each
    task pays for the recording (one-time, included in the mean).

Per-candidate time is the wall time of ``pool.evaluate``; in (b) and (c) the worker start is
left out (a search starts one worker per task for its whole budget) and reported separately.
Timing itself (min_time_s per side, reference interleaved) is the same in every mode.

Run: ``.venv/bin/python benchmarks/eval_overhead.py [--min-time 0.2] [--variants 3]
[--tasks l1_gelu l1_row_softmax l1_matmul]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASKS = ["l1_gelu", "l1_row_softmax", "l1_matmul"]
PHASES = ("worker_start", "replay", "build", "verify", "time")


def candidates(task: str, variants: int) -> list[tuple[str, str]]:
    """(name, source): the naive example, then each template's defaults and ``variants``
    single-parameter changes of the SYCL templates (fast_math left off)."""
    from kernelwright.errors import ConfigError
    from kernelwright.templates import templates_for
    from kernelwright.testing.template_specs import SPECS

    out = [("naive", (ROOT / "examples/candidates" / f"{task}_naive_sycl.py").read_text())]
    spec = SPECS[task]
    for t in templates_for(spec.operator_class):
        out.append((f"{t.name}", t.render(None, spec)))
        if t.backend != "sycl":
            continue
        found = 0
        for name, choices in t.space().items():
            for value in choices:
                params = {name: value}
                if found >= variants or name == "fast_math" or value == t.default_params()[name]:
                    continue
                try:
                    t.validate(params)
                except ConfigError:
                    continue
                out.append((f"{t.name}:{name}={value}", t.render(params, spec)))
                found += 1
                break
    return out


def _evaluate(pool, task, cand) -> tuple[float, object]:
    t0 = time.monotonic()
    result = pool.evaluate(task, cand)
    return time.monotonic() - t0, result


def run_cold(work, settings) -> list[dict]:
    """(a): a new pool (worker) per candidate; the build cache starts empty."""
    from kernelwright.tools.evaluate import WorkerPool

    rows = []
    for task, name, cand in work:
        with WorkerPool(settings) as pool:
            wall, r = _evaluate(pool, task, cand)
        rows.append(_row(task, name, wall, r, keep_start=True))
    return rows


def run_warm(work, settings) -> list[dict]:
    """(b)/(c): one pool for all; each task's worker starts once and stays warm."""
    from kernelwright.tools.evaluate import WorkerPool

    rows = []
    with WorkerPool(settings) as pool:
        for task, name, cand in work:
            wall, r = _evaluate(pool, task, cand)
            rows.append(_row(task, name, wall, r, keep_start=False))
    return rows


def _row(task, name, wall, r, keep_start: bool) -> dict:
    start = r.phases_s.get("worker_start", 0.0)
    return {"task": task.name, "name": name, "wall": wall if keep_start else wall - start,
            "start": start, "phases": dict(r.phases_s), "correct": r.correct,
            "error": r.error, "speedup": r.speedup}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-time", type=float, default=0.2, help="settings.min_time_s")
    parser.add_argument("--variants", type=int, default=2, help="template variants per task")
    parser.add_argument("--tasks", nargs="*", default=TASKS)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="kw_bench_"))
    os.environ["KERNELWRIGHT_CACHE_DIR"] = str(scratch / "cache")  # cold builds: nothing yet

    from kernelwright.config import Settings
    from kernelwright.spec import Candidate, Task, guess_backend

    base = Settings(cache_dir=scratch / "cache", data_dir=scratch / "data",
                    min_time_s=args.min_time)
    work = []
    for name in args.tasks:
        task = Task.from_path(ROOT / "examples/tasks" / f"{name}.py")
        for cname, source in candidates(name, args.variants):
            work.append((task, cname, Candidate(source=source, backend=guess_backend(source))))
    off = base.model_copy(update={"record_replay": False})
    modes = {"a": run_cold(work, off), "b": run_warm(work, off),
             "c": run_warm(work, base)}
    _print(modes, base)


def _print(modes: dict[str, list[dict]], settings) -> None:
    print(f"seeds={settings.seeds} min_time_s={settings.min_time_s} "
          f"warmup={settings.warmup_calls}; seconds per candidate; {len(modes['a'])} candidates")
    print(f"{'task':<16}{'candidate':<34}{'ok':>4}{'(a)':>8}{'(b)':>8}{'(c)':>8}"
          f"{'a/c':>7}{'b/c':>7}   c: verify / time / replay")
    for a, b, c in zip(modes["a"], modes["b"], modes["c"], strict=True):
        ok = a["correct"] and b["correct"] and c["correct"]
        ph = c["phases"]
        print(f"{a['task']:<16}{a['name'][:33]:<34}{'yes' if ok else 'NO':>4}{a['wall']:>8.2f}"
              f"{b['wall']:>8.2f}{c['wall']:>8.2f}{a['wall'] / c['wall']:>7.2f}"
              f"{b['wall'] / c['wall']:>7.2f}   {ph.get('verify', 0):.2f} / "
              f"{ph.get('time', 0):.2f} / {ph.get('replay', 0):.2f}")
        if not ok:
            print(f"    error: {(a['error'] or b['error'] or c['error'] or '')[:200]}")
    means = {k: statistics.mean(r["wall"] for r in rows) for k, rows in modes.items()}
    print("\nmean per-candidate evaluation time:")
    print(f"  (a) cold: new worker, cold build cache, no recording   {means['a']:7.2f} s")
    print(f"  (b) warm cache + warm worker, no replay                {means['b']:7.2f} s")
    print(f"  (c) warm cache + warm worker + record-replay           {means['c']:7.2f} s")
    a_c, b_c = means["a"] / means["c"], means["b"] / means["c"]
    print(f"  (a)/(c) = {a_c:.2f}x    (b)/(c) = {b_c:.2f}x")
    steady = statistics.mean(r["wall"] - r["phases"].get("replay", 0.0) for r in modes["c"])
    print(f"  (c) without the one-time recording (made once per task, then loaded by every "
          f"later worker and run): {steady:.2f} s -> (a)/(c) = {means['a'] / steady:.2f}x, "
          f"(b)/(c) = {means['b'] / steady:.2f}x")
    for k in ("b", "c"):
        phase = {p: statistics.mean(r["phases"].get(p, 0.0) for r in modes[k]) for p in PHASES}
        starts = [r["start"] for r in modes[k] if r["start"]]
        print(f"  ({k}) mean phases: " + ", ".join(f"{p} {v:.3f}" for p, v in phase.items()
                                                    if p != "worker_start")
              + f"; worker starts (left out) {len(starts)} x {statistics.mean(starts):.2f} s")


if __name__ == "__main__":
    main()
