"""Workload sampling: GCL-Sampler beside PKA, Sieve, STEM+ROOT, Photon and random, one run.

For every workload of the sampling suite (``tools/gpusim/workloads/suite.py``: LLM decode loops
and iterative Rodinia/PolyBench apps, ~7,200 kernel invocations) this script

1. traces it once on the PTX emulator (cached on disk by workload + parameters),
2. scans the trace: profiles, digests, relational graphs (cached),
3. computes the reference timing model's cycles of every invocation on the base GPU and four
   variants (L2 x2 / x0.5, SMs x2 / x0.5), cached - the ground truth no sampler sees,
4. trains the GCL encoder once on the graphs of all workloads (contrastive, CPU, seeded) and
   prints the training time,
5. selects representatives with every method (GCL three ways: k by the profile bound with the
   centroid or the first member as representative, and k by silhouette), scores them on the base
   GPU, and re-scores the same representatives on the four variants (robustness).

Errors are "versus the reference timing model". Speedup = total cycles / cycles of the distinct
representatives. Means: harmonic (HM) and arithmetic (AM) of speedup; mean and max error.
``random`` draws as many invocations as GCL chose on that workload (equal budget).

    PYTHONPATH=. python benchmarks/sampling.py [--gpu rtx2080ti] [--small] [--json out.json]

First run: ~10 min on 2 busy cores (tracing ~4 min, scans ~2 min, ground truth ~3 min);
afterwards ~2 min (training + selection).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

from kernelwright.config import Settings
from kernelwright.tools.gpusim.workloads import (
    SAMPLING_SUITE,
    SMALL_SUITE,
    SUITE_SAMPLING,
    traced_workload,
)
from kernelwright.tools.sampler import get_sampler, scan_trace_dir, score, summarize
from kernelwright.tools.sampler.contrastive import TrainConfig
from kernelwright.tools.sampler.gcl import GCLSampler
from kernelwright.tools.sampler.groundtruth import invocation_cycles, robustness_configs

METHODS = ["gcl", "gcl-first", "gcl-silhouette", "pka", "sieve", "stem", "photon", "random"]


def prepare(suite, gpu: str, settings: Settings):
    """Traces, scans and ground-truth cycles (all cached) of every workload."""
    configs = robustness_configs(gpu)
    rows = []
    for entry in suite:
        t0 = time.perf_counter()
        path = traced_workload(entry.name, entry.params, SUITE_SAMPLING, settings=settings)
        traces = scan_trace_dir(path, name=entry.name, settings=settings)
        cycles = invocation_cycles(path, list(configs.values()), settings=settings)
        by_variant = {v: cycles[g.name] for v, g in configs.items()}
        print(f"  {entry.name:9s} {len(traces):5d} invocations, {len(traces.graphs):4d} unique "
              f"graphs  ({time.perf_counter() - t0:6.1f} s)", flush=True)  # fmt: skip
        rows.append((traces, by_variant))
    return rows


def select_all(gcl: GCLSampler, traces, seed: int) -> dict:
    """Every method's selection for one workload (random at GCL's budget)."""
    out = {}
    for rule, rep, name in (("bound", "centroid", "gcl"), ("bound", "first", "gcl-first"),
                            ("silhouette", "centroid", "gcl-silhouette")):  # fmt: skip
        gcl.k_rule, gcl.representative = rule, rep
        out[name] = gcl.select(traces)
    gcl.k_rule, gcl.representative = "bound", "centroid"
    for m in ("pka", "sieve", "stem", "photon"):
        kw = {"seed": seed} if m in ("pka", "stem") else {}
        out[m] = get_sampler(m, **kw).select(traces)
    budget = len(out["gcl"].samples)
    out["random"] = get_sampler("random", budget=budget, seed=seed).select(traces)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu", default="rtx2080ti")
    ap.add_argument("--small", action="store_true", help="the small suite (a quick check)")
    ap.add_argument("--epochs", type=int, default=TrainConfig.epochs)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--weights", default=None, help="save the trained encoder here (.pt)")
    ap.add_argument("--json", default=None, help="write every figure to this file")
    args = ap.parse_args()
    warnings.filterwarnings("ignore", module="sklearn")
    settings = Settings()
    suite = SMALL_SUITE if args.small else SAMPLING_SUITE
    print(f"preparing {len(suite)} workloads (traces, scans, ground truth are cached)")
    rows = prepare(suite, args.gpu, settings)
    print(f"total invocations: {sum(len(t) for t, _ in rows)}")

    gcl = GCLSampler(train=TrainConfig(epochs=args.epochs, seed=args.seed), seed=args.seed)
    trained = gcl.fit([t for t, _ in rows])
    print(f"\nGCL training: {trained.graphs} unique graphs, {args.epochs} epochs, "
          f"{trained.seconds:.1f} s on the CPU (NT-Xent {trained.losses[0]:.3f} -> "
          f"{trained.losses[-1]:.3f})")  # fmt: skip
    if args.weights:
        print(f"encoder weights: {trained.save(args.weights)}")

    scores, robust, infer = {m: [] for m in METHODS}, {}, 0.0
    for traces, cycles in rows:
        sels = select_all(gcl, traces, args.seed)
        infer += sels["gcl"].info["select_seconds"]
        for m, sel in sels.items():
            scores[m].append(score(sel, cycles["base"]))
            for variant, c in cycles.items():
                robust.setdefault((m, variant), []).append(score(sel, c))
    print(f"GCL inference (embed + cluster, all workloads): {infer:.1f} s")
    report = print_tables(scores, robust, rows)
    report["training_seconds"], report["inference_seconds"] = trained.seconds, infer
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1)


def print_tables(scores: dict, robust: dict, rows) -> dict:
    names = [t.name for t, _ in rows]
    print("\nerror % / speedup x per workload (versus the reference timing model; base GPU)")
    print(f"{'workload':9s} {'launches':>8s} " + " ".join(f"{m:>16s}" for m in METHODS))
    for i, name in enumerate(names):
        cells = [f"{scores[m][i].error * 100:7.3f}/{scores[m][i].speedup:7.1f}" for m in METHODS]
        print(f"{name:9s} {len(rows[i][0]):8d} " + " ".join(f"{c:>16s}" for c in cells))
    print(f"\n{'method':15s} {'HM speedup':>10s} {'AM speedup':>10s} {'mean err %':>10s} "
          f"{'max err %':>10s} {'samples':>8s}")  # fmt: skip
    summary = {}
    for m in METHODS:
        s = summarize(scores[m])
        summary[m] = s.as_dict()
        print(f"{m:15s} {s.harmonic_speedup:10.2f} {s.arithmetic_speedup:10.1f} "
              f"{s.mean_error * 100:10.3f} {s.max_error * 100:10.3f} {s.samples:8d}")  # fmt: skip
    variants = list(rows[0][1])
    print("\nrobustness: representatives chosen once (base GPU), re-scored on variants")
    print("mean error % / max error % (HM speedup)")
    print(f"{'method':15s} " + " ".join(f"{v:>22s}" for v in variants))
    rob = {}
    for m in METHODS:
        cells = []
        for v in variants:
            s = summarize(robust[(m, v)])
            rob[f"{m}|{v}"] = s.as_dict()
            cells.append(f"{s.mean_error * 100:.3f}/{s.max_error * 100:.3f} "
                         f"({s.harmonic_speedup:.1f}x)")  # fmt: skip
        print(f"{m:15s} " + " ".join(f"{c:>22s}" for c in cells))
    per = {m: [s.as_dict() for s in scores[m]] for m in METHODS}
    return {"per_workload": per, "summary": summary, "robustness": rob}


if __name__ == "__main__":
    main()
