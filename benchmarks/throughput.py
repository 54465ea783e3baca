"""Warm evaluations per hour with one worker against two, and the per-candidate stage costs.

A *worker* here is one process with its own local ``WorkerPool`` (one intra-op thread, its
own data directory; the build cache is shared): Ray workers are not used (``--cluster`` is not
part of this tree's benchmark), so "two workers" means two such processes on this machine,
fed disjoint halves of the same candidate list.

Each worker first evaluates its share once (warm-up: sessions started, build caches filled;
not reported), says READY and waits; all workers are released together, evaluate their share
``--rounds`` times with a comment line added to each candidate's Python (a new candidate whose
kernel sources are unchanged, as a search's re-parameterised wrappers are), and report per
candidate the wall time of ``pool.evaluate`` and its stages (``EvalResult.phases_s``: build,
verify, time). Overhead = wall - (build + verify + time). Evaluations per hour = measured
evaluations / the slowest worker's time from release to its pool's close (the close counts:
the trusted builder's work, at the close or in the background, is part of a run's cost).

``--cold-kernels``: every configuration gets its own build cache holding only the SYCL shim
(copied from the shared cache, built once; each worker records the copy as trusted before its
pool starts), so each starts with every kernel cold and the measured pass shows what a run
gains from reusing a source built earlier in the same run (without it, the first
configuration's builds warm the cache for all later ones).

``--before TREE`` runs the same measurement with another checkout on ``PYTHONPATH`` first (e.g.
``/work/main`` before a change), so both figures come from one run on the same machine load.
The machine's load average is printed before and after: on a shared machine the figures move
with it.

Run::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/throughput.py --before /work/main
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASKS = ["l1_gelu", "l1_row_softmax"]
STAGES = ("build", "verify", "time")


def candidate_list(tasks: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Per task: the naive SYCL example and the lowered SYCL and C++ programs."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from eval_overhead import candidates

    return {t: candidates(t, 0, lowered=True) for t in tasks}


def serve(args: argparse.Namespace) -> None:
    """One worker (the tree on PYTHONPATH): warm-up, READY, wait for GO, measured rounds."""
    from kernelwright.config import Settings
    from kernelwright.spec import Candidate, Task, guess_backend
    from kernelwright.tools.evaluate import WorkerPool

    scratch = Path(args.scratch)
    os.environ["KERNELWRIGHT_CACHE_DIR"] = args.cache
    settings = Settings(cache_dir=Path(args.cache), data_dir=scratch / "data",
                        min_time_s=args.min_time, worker_threads=1)
    if args.seed_shim:  # the shim copied by the parent: recorded here, as the trusted side
        from kernelwright.tools.evaluate.build_cache import BuildCache

        BuildCache.of(settings).adopt()
    listed = json.loads(Path(args.candidates).read_text())
    share = [(t, n, s) for t in sorted(listed) for n, s in listed[t]][args.index::args.of]
    work = [(Task.from_path(ROOT / "examples/tasks" / f"{t}.py"), n,
             Candidate(source=s, backend=guess_backend(s))) for t, n, s in share]
    rows = []
    with WorkerPool(settings) as pool:
        for task, _, cand in work:
            pool.evaluate(task, cand)
        print("READY", flush=True)
        sys.stdin.readline()
        start = time.monotonic()
        for rnd in range(args.rounds):
            for task, name, cand in work:
                varied = Candidate(source=f"# round {rnd}\n{cand.source}", backend=cand.backend)
                t0 = time.monotonic()
                r = pool.evaluate(task, varied)
                wall = time.monotonic() - t0 - r.phases_s.get("worker_start", 0.0)
                rows.append({"task": task.name, "name": name, "wall": wall,
                             "correct": r.correct, "error": (r.error or "")[:200],
                             **{k: r.phases_s.get(k, 0.0) for k in STAGES}})
    # the pool's close counts: the trusted builder's work is part of a run's cost in both trees
    # (the old harness rebuilds every source there; this one waits for its background builds)
    elapsed = time.monotonic() - start
    print("ROWS " + json.dumps({"elapsed": elapsed, "rows": rows}), flush=True)


def measure(tree: Path, workers: int, args: argparse.Namespace, scratch: Path) -> dict:
    """Start ``workers`` worker processes on ``tree``; release them together; their rows."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cache, seeded = args.cache, []
    if args.cold_kernels:
        cache = str(scratch / "cache")
        shim = Path(args.cache) / "sycl-shim"
        if shim.is_dir():
            shutil.copytree(shim, Path(cache) / "sycl-shim")
            seeded = ["--seed-shim"]
    procs = []
    for i in range(workers):
        cmd = [sys.executable, str(Path(__file__).resolve()), "--serve", "--scratch",
               str(scratch / f"w{i}"), "--candidates", args.candidates, "--index", str(i),
               "--of", str(workers), "--cache", cache, "--rounds", str(args.rounds),
               "--min-time", str(args.min_time), *seeded]
        procs.append(subprocess.Popen(cmd, env=env, cwd=tree, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for p in procs:
        line = p.stdout.readline()
        if not line.startswith("READY"):
            raise SystemExit(f"{tree}: a worker did not start: {line}{p.stderr.read()[-3000:]}")
    for p in procs:
        p.stdin.write("GO\n")
        p.stdin.flush()
    results = []
    for p in procs:
        out, err = p.communicate()
        found = [ln for ln in out.splitlines() if ln.startswith("ROWS ")]
        if not found:
            raise SystemExit(f"{tree}: no result\n{out[-2000:]}\n{err[-3000:]}")
        results.append(json.loads(found[-1][5:]))
    rows = [r for res in results for r in res["rows"]]
    wall = max(res["elapsed"] for res in results)
    return {"workers": workers, "rows": rows, "wall": wall,
            "per_hour": len(rows) / wall * 3600.0}


def summary(label: str, m: dict) -> str:
    rows = m["rows"]
    stages = {k: statistics.mean(r[k] for r in rows) for k in STAGES}
    wall = statistics.mean(r["wall"] for r in rows)
    overhead = wall - sum(stages.values())
    bad = sum(not r["correct"] for r in rows)
    return (f"{label:<8}{m['workers']:>3} worker(s) {len(rows):>3} evals in {m['wall']:7.1f} s: "
            f"{m['per_hour']:7.0f} evals/h | per candidate {wall:.2f} s = build "
            f"{stages['build']:.2f} + verify {stages['verify']:.2f} + time {stages['time']:.2f}"
            f" + overhead {overhead:.2f}" + (f" | {bad} not correct" if bad else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="another checkout, measured first")
    parser.add_argument("--after", type=Path, default=ROOT)
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--min-time", type=float, default=0.2, help="settings.min_time_s")
    parser.add_argument("--tasks", nargs="*", default=TASKS)
    parser.add_argument("--cache", help="the build cache every worker shares (default: a new "
                        "one; the first configuration's warm-up fills it)")
    parser.add_argument("--cold-kernels", action="store_true",
                        help="each configuration starts with no kernel built (see above)")
    parser.add_argument("--seed-shim", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--scratch", help=argparse.SUPPRESS)
    parser.add_argument("--candidates", help=argparse.SUPPRESS)
    parser.add_argument("--index", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--of", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args)
        return
    base = Path(tempfile.mkdtemp(prefix="kw_throughput_"))
    listed = base / "candidates.json"
    listed.write_text(json.dumps(candidate_list(args.tasks)))
    args.candidates = str(listed)
    args.cache = str(Path(args.cache or base / "cache").resolve())
    print(("each configuration starts with a cold kernel cache; " if args.cold_kernels
           else "") + f"load average before: {os.getloadavg()} on {os.cpu_count()} cores; "
          f"min_time_s={args.min_time}, rounds={args.rounds}, tasks={args.tasks}; "
          "workers are local processes with one WorkerPool each (no Ray)")
    trees = ([("before", args.before)] if args.before else []) + [("after", args.after)]
    for label, tree in trees:
        for n in args.workers:
            m = measure(tree, n, args, base / f"{label}{n}")
            print(summary(label, m), flush=True)
            for r in m["rows"]:
                if not r["correct"]:
                    print(f"    {r['task']}/{r['name']}: {r['error']}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
