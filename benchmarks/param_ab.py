"""One schedule parameter, A/B, in process: eager, the lowered program at its default point, and
the same program with ``--set NAME=VALUE`` on every group that has ``NAME``, timed side by side.

Per task: lower once, build both candidates beside the reference (its weights loaded, the same
inputs), check each against eager (max abs error printed), then ``--rounds`` rounds in which
each of the three runs ``--calls`` calls; medians and minima in ms per call. A task whose space
has no such parameter is listed and skipped. A developer's tool for a change to one emitter;
the harness (``benchmarks/corpus_coverage.py``) is the measurement of record.

Run::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/param_ab.py --backend cpp --set stage=0 \\
        /tmp/kb-all/level2_94_Gemm_BiasAdd_Hardtanh_Mish_GroupNorm.py
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from pathlib import Path

import torch


def _value(text: str):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def measure(path: Path, backend: str, name: str, value, rounds: int, calls: int,
            custom: bool) -> str:
    from kernelwright.spec import ImplementationSpace, Task, derive_contract
    from kernelwright.tools.lower import lower_task
    from kernelwright.tools.lower.in_process import built_candidate

    task = Task.from_path(path)
    contract = derive_contract(task)
    if custom:
        contract = contract.narrowed([ImplementationSpace.CUSTOM_KERNEL])
    prog = lower_task(task, backend, contract=contract)
    keys = [k for k in prog.space if k.partition(".")[2] == name]
    if not keys:
        return f"{path.stem}: no group has {name!r}; skipped"
    module = task.load_module()
    default, ref = built_candidate(prog, module)
    changed, _ = built_candidate(prog.with_params({k: value for k in keys}), module)
    torch.manual_seed(1)
    inputs = module.get_inputs()
    runs = {"eager": ref, "default": default, f"{name}={value}": changed}
    lines = [f"{path.stem} ({', '.join(keys)}):"]
    with torch.no_grad():
        want = ref(*inputs)
        for label, model in list(runs.items())[1:]:
            got = model(*inputs)
            pairs = zip(want if isinstance(want, tuple) else (want,),
                        got if isinstance(got, tuple) else (got,), strict=True)
            err = max(float((a - b).abs().max()) for a, b in pairs)
            lines.append(f"  {label}: max abs error {err:.2e}")
        times: dict[str, list[float]] = {k: [] for k in runs}
        for _ in range(rounds):
            for label, model in runs.items():
                start = time.perf_counter()
                for _ in range(calls):
                    model(*inputs)
                times[label].append((time.perf_counter() - start) / calls * 1e3)
    lines.append("  " + "  ".join(f"{k} {statistics.median(v):.2f} ms (min {min(v):.2f})"
                                  for k, v in times.items()))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", nargs="+", type=Path)
    parser.add_argument("--backend", default="cpp", choices=["cpp", "sycl"])
    parser.add_argument("--set", required=True, help="NAME=VALUE, e.g. stage=0")
    parser.add_argument("--custom", action="store_true",
                        help="custom kernels only (the default point of --spaces custom)")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--calls", type=int, default=3)
    args = parser.parse_args()
    name, _, text = args.set.partition("=")
    warnings.filterwarnings("ignore")
    for path in args.tasks:
        print(measure(path, args.backend, name, _value(text), args.rounds, args.calls,
                      args.custom),
              flush=True)


if __name__ == "__main__":
    main()
