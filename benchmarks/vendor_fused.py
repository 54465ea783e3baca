"""Eager vs the lowered program per implementation space of its GEMM/conv anchors (C++).

For each task file: eager PyTorch, our kernel (custom_kernel), the library call with bias and
activation as oneDNN post-ops (vendor, fused), the library call + our epilogue kernel (vendor,
blas), and for a convolution both library forms again channels-last (``_cl``; "fused" is the
plain library call where the anchor has no post-ops to fuse), each timed in this process on the
nominal inputs, interleaved over rounds (median ms per forward). Prints the load average before
and after: on a shared machine read ratios, not absolute times.

    PYTHONPATH=. .venv/bin/python benchmarks/vendor_fused.py examples/tasks/l2_*.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

from kernelwright.spec import Task
from kernelwright.spec.inputs import init_inputs_for, nominal_inputs
from kernelwright.tools.lower import lower_task
from kernelwright.tools.lower.choose import time_program

OPTIONS = {"kernel": {"impl": "kernel"}, "fused": {"impl": "vendor", "vform": "fused"},
           "blas": {"impl": "vendor", "vform": "blas"},
           "fused_cl": {"impl": "vendor", "vform": "fused", "vlayout": "cl"},
           "blas_cl": {"impl": "vendor", "vform": "blas", "vlayout": "cl"}}


def eager_s(task: Task, min_time_s: float = 0.05, wrap=None) -> float:
    """Seconds per forward of the task's model (``wrap(model)``: e.g. ``torch.compile``)."""
    module = task.load_module()
    torch.manual_seed(0)
    model = module.Model(*init_inputs_for(module)).eval()
    if wrap is not None:
        model = wrap(model)
    inputs = nominal_inputs(module, 0)
    with torch.no_grad():
        model(*inputs)
        start = time.perf_counter()
        model(*inputs)
        reps = max(1, min(1000, int(min_time_s / max(time.perf_counter() - start, 1e-6))))
        start = time.perf_counter()
        for _ in range(reps):
            model(*inputs)
    return (time.perf_counter() - start) / reps


def programs(task: Task) -> dict[str, object]:
    prog = lower_task(task, "cpp")
    anchors = sorted({k.split(".")[0] for k in prog.space if k.endswith(".impl")})
    out = {}
    for name, opts in OPTIONS.items():
        params = {}
        for gi in anchors:
            params.update({f"{gi}.{k}": v for k, v in opts.items()
                           if f"{gi}.{k}" in prog.space})
        if name != "kernel" and not anchors:
            continue
        if name.startswith("blas") and not any(k.endswith(".vform") for k in prog.space):
            continue
        if name.endswith("_cl") and not any(k.endswith(".vlayout") for k in prog.space):
            continue
        out[name] = prog.with_params(params)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tasks", nargs="+")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    cols = ["eager", *OPTIONS]
    print(f"{'task':<34}" + "".join(f"{c + ' ms':>12}" for c in cols)
          + "".join(f"{c + ' x':>9}" for c in OPTIONS))
    for path in args.tasks:
        task = Task.from_path(path)
        progs = programs(task)
        samples: dict[str, list[float]] = {c: [] for c in cols}
        for _ in range(args.rounds):
            samples["eager"].append(eager_s(task))
            for name, prog in progs.items():
                samples[name].append(time_program(prog, rounds=1)[0])
        ms = {c: statistics.median(v) * 1e3 for c, v in samples.items() if v}
        row = "".join(f"{ms[c]:>12.3f}" if c in ms else f"{'-':>12}" for c in cols)
        row += "".join(f"{ms['eager'] / ms[c]:>8.2f}x" if c in ms else f"{'-':>9}"
                       for c in OPTIONS)
        print(f"{task.name:<34}{row}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
