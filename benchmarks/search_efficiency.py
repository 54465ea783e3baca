"""Search efficiency: best speedup versus number of evaluations, per search strategy.

Strategies: random search (without replacement), KernelFoundry's exhaustive grid (declaration
order), Optuna TPE (``OptunaTuner``), and the R^3 hierarchy (a MAP-Elites archive of kernel
sources outside, TPE over schedule parameters inside). Every strategy replays RECORDED timing
tables, so many seeds cost nothing. ``--record`` measures the declared schedule space of each
task's lowered SYCL program (the launch mode held at its default); tables recorded before the
template library was retired (``source`` ``measured:sycl.*``) still replay:

    # measure the tables once with the real harness (slow: one evaluation per grid point)
    .venv/bin/python benchmarks/search_efficiency.py --record benchmarks/data/search_recorded.json
    # compare strategies on recorded tables (or on synthetic ones without --tables)
    .venv/bin/python benchmarks/search_efficiency.py --tables benchmarks/data/search_recorded.json

Prints, per task and strategy, the evaluations needed to reach 95% of the grid's best speedup
(mean over seeds; a run that never gets there counts as the full budget and is marked), and
writes a PNG of the mean best-so-far curves.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernelwright.errors import SpaceExhaustedError  # noqa: E402
from kernelwright.tools.tune.base import Tuner  # noqa: E402
from kernelwright.tools.tune.baselines import GridSearch, RandomSearch  # noqa: E402
from kernelwright.tools.tune.recorded import (  # noqa: E402
    RecordedTable,
    load_tables,
    save_tables,
    synthetic_table,
)
from kernelwright.tools.tune.tuner import OptunaTuner  # noqa: E402

log = logging.getLogger("search_efficiency")
TARGET = 0.95
STRATEGIES: dict[str, Callable[[RecordedTable, int], Tuner] | None] = {
    "random": lambda t, s: RandomSearch(t.space(), seed=s),
    "grid": lambda t, s: GridSearch(t.space()),
    "tpe": lambda t, s: OptunaTuner(t.space(), seed=s),
    "archive+tpe": None,  # the R^3 hierarchy: see hierarchy_curve
}
_POW2 = [16, 32, 64, 128, 256, 512, 1024]
# Synthetic stand-ins: spaces shaped like vectorised pointwise, row-reduction and GEMM schedules.
SYNTHETIC = {
    "syn_elementwise": {"wg_size": _POW2, "vec": [1, 2, 4, 8, 16], "unroll": [1, 2, 4, 8],
                        "chunks": [1, 2, 4, 8]},
    "syn_rowwise_norm": {"wg_size": _POW2, "reduction": ["group", "tree"],
                         "online": [False, True], "unroll": [1, 2, 4, 8]},
    "syn_gemm": {"tile_m": [8, 16, 32, 64, 128], "tile_n": [8, 16, 32, 64, 128],
                 "tile_k": [4, 8, 16, 32], "reg": [1, 2, 4, 8]},
}  # fmt: skip
SYNTHETIC_LIMITS = {"syn_elementwise": 4096, "syn_gemm": 4096}
# Real recordings: example tasks whose lowered SYCL program's schedule space is measured.
RECORD = ["l1_gelu", "l1_row_softmax", "l1_layernorm"]


def best_so_far(tuner: Tuner, table: RecordedTable, budget: int) -> list[float]:
    """Best correct speedup after each evaluation (0 until something correct is found)."""
    curve: list[float] = []
    while tuner.n_evaluations < budget and not tuner.exhausted:
        try:
            number, params = tuner.ask()
        except SpaceExhaustedError:
            break
        before = tuner.n_evaluations
        tuner.tell(number, table.result(params))
        if tuner.n_evaluations > before:
            best = tuner.best()
            curve.append(best[1] if best else 0.0)
    return curve + [curve[-1] if curve else 0.0] * (budget - len(curve))


def hierarchy_curve(table: RecordedTable, seed: int, budget: int, chunk: int = 6) -> list[float]:
    """R^3 on a recorded table: sources outside, launch parameters inside.

    Categorical/boolean parameters choose the kernel's source (algorithm variants: reduction
    kind, online softmax, ...); numeric ones are launch parameters. Outer level: every source
    at a middle launch point, kept in a MAP-Elites archive (one cell per source); then the
    archive picks a parent source (explore / exploit / uniform) and a TPE study per source
    tunes its launch parameters for ``chunk`` evaluations, and so on until the budget is spent.
    """
    from itertools import product

    from kernelwright.tools.evolve import MapElitesArchive, ParentSelector
    from kernelwright.tools.tune.base import params_key
    from kernelwright.tools.tune.space import SearchSpace

    outer = [n for n, v in table.declared.items() if any(isinstance(x, (str, bool)) for x in v)]
    inner = {n: v for n, v in table.declared.items() if n not in outer}
    sources = [dict(zip(outer, combo, strict=True)) for combo in
               product(*(table.declared[n] for n in outer))]  # fmt: skip
    levels = max([len(table.declared[n]) for n in outer] or [1])
    archive = MapElitesArchive(axes=tuple(outer) or ("source",), levels=levels, seed=seed)
    selector = ParentSelector(seed=seed)
    seen: dict[str, float | None] = {}
    curve: list[float] = []

    def measure(params: dict) -> float | None:
        key = params_key(params)
        if key not in seen:
            result = table.result(params)
            seen[key] = result.speedup
            curve.append(max([v for v in seen.values() if v is not None] or [0.0]))
        return seen[key]

    def cell(source: dict) -> tuple[int, ...]:
        return tuple(list(table.declared[n]).index(source[n]) for n in outer) or (0,)

    middle = {n: v[len(v) // 2] for n, v in inner.items()}
    for source in sources:  # outer sweep
        if len(curve) >= budget:
            break
        speed = measure({**source, **middle})
        archive.add_scored(params_key(source), cell(source), 5 if speed else 4, speed)
    tuners: dict[str, OptunaTuner] = {}
    stalled = 0
    while len(curve) < budget and len(seen) < len(table.rows) and stalled < 50:
        parent = selector.select(archive).parent.candidate_id
        source = next(s for s in sources if params_key(s) == parent)
        tuner = tuners.setdefault(parent, OptunaTuner(SearchSpace.from_declared(inner), seed=seed)
                                  if inner else None)  # fmt: skip
        before = len(curve)
        for _ in range(chunk):
            if tuner is None or len(curve) >= budget or tuner.exhausted:
                break
            try:
                number, params = tuner.ask()
            except SpaceExhaustedError:
                break
            tuner.tell(number, table.result({**source, **params}))
            speed = measure({**source, **params})
            archive.add_scored(parent, cell(source), 5 if speed else 4, speed)
        stalled = stalled + 1 if len(curve) == before else 0
    curve = curve[:budget]
    return curve + [curve[-1] if curve else 0.0] * (budget - len(curve))


def evals_to_reach(curve: list[float], target: float) -> int | None:
    return next((i + 1 for i, v in enumerate(curve) if v >= target), None)


def run(
    tables: list[RecordedTable], seeds: int, model_budget: int
) -> dict[str, dict[str, list[list[float]]]]:
    """curves[task][strategy] = one best-so-far curve per seed.

    Grid and random run through the whole grid; model-based strategies stop after
    ``model_budget`` evaluations (their cost per ask grows with the history).
    """
    curves: dict[str, dict[str, list[list[float]]]] = {}
    for table in tables:
        curves[table.task] = {}
        for name, make in STRATEGIES.items():
            budget = len(table.rows) if name in ("grid", "random") else model_budget
            budget = min(budget, len(table.rows))
            n = 1 if name == "grid" else seeds  # the grid is deterministic
            t0 = time.perf_counter()
            curves[table.task][name] = [
                hierarchy_curve(table, s, budget)
                if name == "archive+tpe"
                else best_so_far(make(table, s), table, budget)
                for s in range(n)
            ]
            log.info("%s %s: %.1fs", table.task, name, time.perf_counter() - t0)
    return curves


def summary_rows(tables: list[RecordedTable], curves: dict) -> list[dict]:
    rows = []
    for table in tables:
        target, budget = TARGET * table.best(), len(table.rows)
        for name, runs in curves[table.task].items():
            hits = [evals_to_reach(c, target) for c in runs]
            evals = [h if h is not None else budget for h in hits]
            rows.append({"task": table.task, "strategy": name, "grid_size": budget,
                         "grid_best": round(table.best(), 3), "mean_evals": statistics.mean(evals),
                         "std_evals": statistics.pstdev(evals), "reached": sum(h is not None
                         for h in hits), "runs": len(runs)})  # fmt: skip
    return rows


def format_table(rows: list[dict]) -> str:
    head = f"{'task':<18} {'size':>5} {'best':>6}  " + "  ".join(f"{s:>14}" for s in STRATEGIES)
    lines = [f"evaluations to reach {TARGET:.0%} of the grid's best (mean ± std over seeds)", head]
    for task in dict.fromkeys(r["task"] for r in rows):
        rs = {r["strategy"]: r for r in rows if r["task"] == task}
        first = next(iter(rs.values()))
        cells = []
        for s in STRATEGIES:
            r = rs[s]
            miss = "" if r["reached"] == r["runs"] else "*"
            cells.append(f"{r['mean_evals']:7.1f} ± {r['std_evals']:4.1f}{miss}".rjust(14))
        lines.append(f"{task:<18} {first['grid_size']:>5} {first['grid_best']:>6.2f}  "
                     + "  ".join(cells))  # fmt: skip
    means = {s: statistics.mean(r["mean_evals"] / r["grid_size"] for r in rows
                                if r["strategy"] == s) for s in STRATEGIES}  # fmt: skip
    lines.append(
        f"{'mean share of grid':<31}" + "  ".join(f"{means[s]:>14.1%}" for s in STRATEGIES)
    )
    if any(r["reached"] < r["runs"] for r in rows):
        lines.append("* some runs never reached the target and count as the full grid")
    return "\n".join(lines)


def plot(tables: list[RecordedTable], curves: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(tables), figsize=(5 * len(tables), 4), squeeze=False)
    for ax, table in zip(axes[0], tables, strict=True):
        for name, runs in curves[table.task].items():
            n = len(runs[0])
            mean = [statistics.mean(r[i] for r in runs) / table.best() for i in range(n)]
            ax.plot(range(1, n + 1), mean, label=f"{name} ({len(runs)} seeds)")
        ax.axhline(TARGET, color="grey", linestyle=":", linewidth=1)
        ax.set(
            xscale="log",
            xlabel="evaluations",
            ylabel="best speedup / grid best",
            title=f"{table.task} ({len(table.rows)} points, {table.source.split(':')[0]})",
        )
        ax.legend(loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def synthetic_tables(seed: int = 0) -> list[RecordedTable]:
    return [synthetic_table(task, decl, seed=seed + i, limit=SYNTHETIC_LIMITS.get(task))
            for i, (task, decl) in enumerate(SYNTHETIC.items())]  # fmt: skip


def record_tables(out: Path, tasks: list[str]) -> list[RecordedTable]:
    """Measure every point of each task's lowered SYCL schedule space (launch mode fixed at
    its default) with the real harness (one warm worker).

    Saves after every point and skips points already in ``out``, so an interrupted recording
    resumes where it stopped.
    """
    from kernelwright.config import Settings
    from kernelwright.spec import Task
    from kernelwright.tools.evaluate import WorkerPool, evaluate
    from kernelwright.tools.lower import lower_task
    from kernelwright.tools.tune.base import params_key
    from kernelwright.tools.tune.space import SearchSpace

    done = {t.task: t for t in load_tables(out)} if out.exists() else {}
    with WorkerPool(Settings(seeds=1, min_time_s=0.05)) as pool:
        for task in tasks:
            path = ROOT / "examples/tasks" / f"{task}.py"
            prog = lower_task(Task.from_path(path), "sycl")
            declared = {k: list(v) for k, v in prog.space.items() if k != "launch"}
            old = done.get(task)
            rows = dict(old.rows) if old and old.declared == declared else {}
            refs = [old.reference_s] if old else []
            for params in SearchSpace.from_declared(declared).grid():
                if params_key(params) in rows:
                    continue
                r = evaluate(path, prog.with_params(params).candidate, pool=pool)
                rows[params_key(params)] = [int(r.level), r.speedup]
                refs += [r.timing.reference_median_s] if r.timing else []
                log.info("%s %s -> %s %s", task, params, r.level.name, r.speedup)
                done[task] = RecordedTable(
                    task,
                    declared,
                    dict(rows),
                    statistics.median(refs or [1e-3]),
                    "measured:lowered.sycl",
                )
                save_tables(list(done.values()), out)
    return [done[t] for t in tasks if t in done]


def complete(tables: list[RecordedTable]) -> list[RecordedTable]:
    """Tables that cover their whole grid (a partial recording cannot be replayed)."""
    for t in tables:
        if len(t.rows) != t.space().size:
            log.warning("skip %s: %d of %d points recorded", t.task, len(t.rows), t.space().size)
    return [t for t in tables if len(t.rows) == t.space().size]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=Path, help="recorded tables JSON (default: synthetic)")
    ap.add_argument("--record", type=Path, help="measure tables with the harness into this file")
    ap.add_argument("--tasks", nargs="*", default=RECORD, help="example tasks to --record")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--model-budget", type=int, default=200, help="evaluations per TPE run")
    ap.add_argument("--plot", type=Path, default=ROOT / "benchmarks/results/search_efficiency.png")
    ap.add_argument("--json", type=Path, help="also write the summary rows as JSON")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if args.record:
        record_tables(args.record, args.tasks)
        return 0
    tables = complete(load_tables(args.tables)) if args.tables else synthetic_tables()
    curves = run(tables, args.seeds, args.model_budget)
    rows = summary_rows(tables, curves)
    print(f"tables: {args.tables or 'synthetic (analytic cost model)'}; seeds: {args.seeds}; "
          f"TPE budget: {args.model_budget} evaluations")  # fmt: skip
    print(format_table(rows))
    plot(tables, curves, args.plot)
    print(f"plot: {args.plot}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
