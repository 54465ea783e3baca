"""Per-forward host overhead of lowered candidates on the SYCL CPU device.

Prints, for a few small tasks, microseconds per forward call (median of interleaved runs) of
eager PyTorch and of the lowered candidate under each launch mode:
  steps  one Python launch per kernel (argument conversion each time, wait at the end);
  chain  the whole forward as one prepared submission (arguments marshalled once, one C call).
Tiny tensors make the numbers host overhead; the larger row shows it against real work.
With ``--speed TASK...`` it prints instead, per task file, eager vs the lowered candidate
(default schedule, SYCL) timed interleaved in one process, and the speedup.

    PYTHONPATH=. .venv/bin/python benchmarks/launch_overhead.py [--repeats 2000]
    PYTHONPATH=. .venv/bin/python benchmarks/launch_overhead.py --speed examples/tasks/*.py
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import types
from pathlib import Path

import torch

from kernelwright.spec import Task
from kernelwright.spec.inputs import init_inputs_for
from kernelwright.tools.lower import lower_task

TASKS = {
    "relu4": ("x", "torch.relu(x)", "torch.randn(4)"),
    "chain3": ("x", "torch.relu(x.sum(1, keepdim=True) * x).cumsum(1)", "torch.randn(4, 8)"),
    "softmax64x6144": ("x", "torch.softmax(x, dim=-1)", "torch.randn(64, 6144)"),
}


def task_file(folder: Path, name: str, spec) -> Task:
    arg, expr, make = spec
    path = folder / f"{name}.py"
    path.write_text(
        "import torch\nfrom torch import nn\n\n\nclass Model(nn.Module):\n"
        f"    def forward(self, {arg}):\n        return {expr}\n\n\n"
        f"def get_inputs():\n    return [{make}]\n\n\ndef get_init_inputs():\n    return []\n")
    return Task.from_path(path)


def build(prog):
    mod = types.ModuleType("lowered")
    exec(compile(prog.candidate.source, "lowered", "exec"), mod.__dict__)
    task = prog.task.load_module()
    return mod.ModelNew(*init_inputs_for(task)).eval()


def per_call_us(fn, inputs, repeats: int, warm: int = 20, rounds: int = 5) -> float:
    for _ in range(warm):
        fn(*inputs)
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(repeats):
            fn(*inputs)
        samples.append((time.perf_counter() - start) / repeats * 1e6)
    return statistics.median(samples)


def speed_table(paths: list[str], backend: str) -> None:
    """Eager vs lowered per task, interleaved rounds, medians (seconds -> microseconds)."""
    print(f"{'task':<30}{'eager us':>12}{'lowered us':>12}{'speedup':>9}  kernels")
    for path in paths:
        task = Task.from_path(path)
        prog = lower_task(task, backend)
        module = task.load_module()
        torch.manual_seed(0)
        ref = module.Model(*init_inputs_for(module)).eval()
        new = build(prog)
        new.load_state_dict(ref.state_dict())
        inputs = module.get_inputs()
        with torch.no_grad():
            reps = max(3, int(0.2 / max(1e-6, _once(ref, inputs))))
            eager, lowered = [], []
            for _ in range(5):
                eager.append(per_call_us(ref, inputs, reps, warm=2, rounds=1))
                lowered.append(per_call_us(new, inputs, reps, warm=2, rounds=1))
        e, w = statistics.median(eager), statistics.median(lowered)
        kinds = ",".join(g.kind for g in prog.variants[0].sched.groups)
        print(f"{task.name:<30}{e:>12.1f}{w:>12.1f}{e / w:>8.2f}x  {kinds}", flush=True)


def _once(fn, inputs) -> float:
    start = time.perf_counter()
    fn(*inputs)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=2000)
    ap.add_argument("--speed", nargs="*", help="task files: print eager vs lowered instead")
    ap.add_argument("--backend", default="sycl")
    args = ap.parse_args()
    if args.speed:
        speed_table(args.speed, args.backend)
        return
    print(f"{'task':<16}{'kernels':>8}{'eager us':>10}{'steps us':>10}{'chain us':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, spec in TASKS.items():
            task = task_file(Path(tmp), name, spec)
            prog = lower_task(task, "sycl")
            module = task.load_module()
            torch.manual_seed(0)
            ref = module.Model(*init_inputs_for(module)).eval()
            inputs = module.get_inputs()
            reps = args.repeats if "6144" not in name else max(20, args.repeats // 50)
            row = [per_call_us(ref, inputs, reps)]
            for mode in ("steps", "chain"):
                model = build(prog.with_params({"launch": mode}))
                torch.testing.assert_close(model(*inputs), ref(*inputs), atol=1e-4, rtol=1e-4)
                row.append(per_call_us(model, inputs, reps))
            nk = len(prog.variants[0].sched.groups)
            print(f"{name:<16}{nk:>8}" + "".join(f"{v:>10.1f}" for v in row), flush=True)


if __name__ == "__main__":
    main()
