"""Per-candidate wall time of the evaluation harness, split by phase, for three tasks.

For each task: a cold evaluation (fresh worker, empty build cache), then warm evaluations
(same worker, cached build). Prints one table and the candidates evaluated per minute with a
warm worker and a warm cache. Uses the example tasks/candidates when present, otherwise the
harness's own fixtures.

Run: ``.venv/bin/python benchmarks/eval_overhead.py [--warm-runs 5] [--min-time 0.2]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = [
    ("examples/tasks/l1_gelu.py", "examples/candidates/l1_gelu_naive_sycl.py"),
    ("examples/tasks/l1_row_softmax.py", "examples/candidates/l1_row_softmax_naive_sycl.py"),
    ("examples/tasks/l1_matmul.py", "examples/candidates/l1_matmul_naive_sycl.py"),
]
FIXTURES = [
    ("tests/fixtures/tasks/gelu_kernel.py", "tests/fixtures/candidates/gelu_cpp.py"),
    ("tests/fixtures/tasks/gelu.py", "tests/fixtures/candidates/gelu_torch.py"),
    ("tests/fixtures/tasks/matmul.py", "tests/fixtures/candidates/linear_torch.py"),
]


def _pairs() -> list[tuple[Path, Path]]:
    chosen = EXAMPLES if all((ROOT / c).exists() for _, c in EXAMPLES) else FIXTURES
    return [(ROOT / t, ROOT / c) for t, c in chosen]


def _measure(task_path: Path, cand_path: Path, settings, warm_runs: int) -> dict:
    from kernelwright.spec import Candidate, Task
    from kernelwright.tools.evaluate import WorkerPool

    task, cand = Task.from_path(task_path), Candidate.from_file(cand_path)
    with WorkerPool(settings) as pool:
        t0 = time.monotonic()
        cold = pool.evaluate(task, cand)
        cold_wall = time.monotonic() - t0
        warm, walls = [], []
        for _ in range(warm_runs):
            t0 = time.monotonic()
            warm.append(pool.evaluate(task, cand))
            walls.append(time.monotonic() - t0)
        memory = pool.worker(task, settings)[0].memory_mb
    med = {k: statistics.median(r.phases_s.get(k, 0.0) for r in warm)
           for k in ("build", "verify", "time")}
    return {"task": task.name, "correct": cold.correct and all(r.correct for r in warm),
            "error": cold.error, "speedup": cold.speedup,
            "start": cold.phases_s.get("worker_start", 0.0),
            "build_cold": cold.phases_s.get("build", 0.0), "build_warm": med["build"],
            "verify": med["verify"], "time": med["time"], "cold_wall": cold_wall,
            "warm_wall": statistics.median(walls), "memory": memory}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm-runs", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.2, help="settings.min_time_s")
    args = parser.parse_args()
    cache = tempfile.mkdtemp(prefix="kw_bench_cache_")
    os.environ["KERNELWRIGHT_CACHE_DIR"] = cache  # cold builds: nothing cached yet

    from kernelwright.config import Settings

    settings = Settings(cache_dir=Path(cache), min_time_s=args.min_time)
    rows = [_measure(t, c, settings, args.warm_runs) for t, c in _pairs()]
    _print(rows, settings)


def _print(rows: list[dict], settings) -> None:
    head = (f"{'task':<16}{'ok':>4}{'start':>8}{'build0':>8}{'build1':>8}{'verify':>8}"
            f"{'time':>8}{'cold':>8}{'warm':>8}{'evals/min':>10}{'VmHWM':>8}{'VmPeak':>8}")
    print(f"seeds={settings.seeds} min_time_s={settings.min_time_s} "
          f"warmup={settings.warmup_calls}; seconds; build0 = empty cache, build1 = cached")
    print(head)
    for r in rows:
        mem = r["memory"]
        print(f"{r['task']:<16}{'yes' if r['correct'] else 'NO':>4}{r['start']:>8.2f}"
              f"{r['build_cold']:>8.2f}{r['build_warm']:>8.3f}{r['verify']:>8.2f}"
              f"{r['time']:>8.2f}{r['cold_wall']:>8.2f}{r['warm_wall']:>8.2f}"
              f"{60 / r['warm_wall']:>10.1f}{mem.get('VmHWM', 0):>7}M{mem.get('VmPeak', 0):>7}M")
        if not r["correct"]:
            print(f"    error: {(r['error'] or '')[:300]}")
    total = sum(r["warm_wall"] for r in rows) / len(rows)
    print(f"mean warm wall {total:.2f} s -> {60 / total:.1f} candidates/min (warm worker+cache)")


if __name__ == "__main__":
    main()
