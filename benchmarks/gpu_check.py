"""CUDA on a real GPU against the PTX emulator: the same kernels on the same inputs.

For a machine with a CUDA GPU, CuPy and nvcc (the lent H200 machine). Three tables:

1. workloads: the simulator's own CUDA programs (``kernelwright.tools.gpusim.workloads``), each
   launch through CuPy from the same PTX the emulator runs, with the same inputs. Per program:
   the largest difference between GPU and emulator outputs, each one's error against numpy, the
   GPU's time in the program's kernels (CUPTI through torch's profiler: kernel execution only;
   median of ``--rounds`` runs after a first one, the GPU kept busy for a second before), the
   wall time of its launches (CUDA events around each launch: launch latency included) and the
   timing model's prediction for that GPU from the emulator's traces (``--gpu``, default h100:
   the model has no H200, which differs from it in memory only).
2. backend: kernelwright's CUDA backend end to end. Each task's lowered CUDA module (and the
   hand-written ``examples/candidates/*_cuda.py`` beside its task) is built once per runner:
   on the GPU with CUDA tensors, and on the emulator (``Settings.cuda_emulator``) with CPU
   tensors; both run the task's smallest shape variant and are compared with PyTorch.
3. speed: on the GPU at the task's own sizes, torch eager against the kernel, each call
   followed by a device synchronisation (the lowered module waits at the end of its forward),
   interleaved rounds, medians in microseconds; with ``--compile``, torch.compile of the
   reference beside them (compiled and warmed up first; its compile time is not timed).

    python benchmarks/gpu_check.py [--workloads mm3 mm3:size=192 ...] [--tasks FILE ...]
                                   [--gpu h100] [--compile] [--emulator-only] [--json OUT]

Without a CUDA device it says so and exits 2; ``--emulator-only`` runs the emulator halves alone
(to check the script on a CPU machine).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
import traceback
import types
from pathlib import Path
from typing import Any

import numpy as np
import torch

from kernelwright.config import Settings
from kernelwright.spec import Task, derive_contract, variant_inputs
from kernelwright.spec.inputs import init_inputs_for
from kernelwright.tools.backends._cuda_run import cuda_device
from kernelwright.tools.backends.registry import BackendRegistry, activate
from kernelwright.tools.gpusim._types import dtype_of
from kernelwright.tools.gpusim.ptx import parse_ptx
from kernelwright.tools.gpusim.timing import simulate_kernels
from kernelwright.tools.gpusim.traces import MemoryTraceSink
from kernelwright.tools.gpusim.workloads import get_workload
from kernelwright.tools.gpusim.workloads.base import max_error
from kernelwright.tools.lower import lower_task

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ("mm3", "gaussian", "bfs", "lud", "srad", "cfd", "pythia",  # their default sizes
             "mm3:size=192", "gaussian:size=128", "srad:rows=256,cols=256")
TASKS = ("l1_gelu", "l1_layernorm", "l1_rmsnorm", "l1_row_softmax", "l1_sum_reduction",
         "l1_transpose", "l1_matmul", "l2_add_layernorm", "l2_matmul_bias_gelu",
         "l2_scaled_matmul_softmax")
POINTER_TYPES = ("u64", "b64", "s64")


# -- workloads ---------------------------------------------------------------------------

class GpuLauncher:
    """A workload's launches through CuPy: numpy buffers copied to the GPU before each launch
    and back after it (what the emulator does to them), every launch timed by CUDA events."""

    def __init__(self, ptx: str, folder: Path) -> None:
        import cupy

        self.cupy = cupy
        # one file per module: CuPy keeps a module loaded from a path it has seen
        path = folder / f"{hashlib.sha256(ptx.encode()).hexdigest()[:16]}.ptx"
        path.write_text(ptx)
        self.module = cupy.RawModule(path=str(path))
        self.params = {name: k.params for name, k in parse_ptx(ptx).kernels.items()}
        self.milliseconds: list[float] = []

    def __call__(self, kernel: str, grid, block, *args: Any, shared: int = 0) -> None:
        cp = self.cupy
        on_gpu = [cp.asarray(a) if isinstance(a, np.ndarray) else None for a in args]
        packed = []
        for a, d, p in zip(args, on_gpu, self.params[kernel], strict=True):
            if d is not None:
                packed.append(np.uint64(d.data.ptr))
            elif p.type in POINTER_TYPES:
                packed.append(np.uint64(a))
            else:
                packed.append(np.dtype(dtype_of(p.type)).type(a))
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        self.module.get_function(kernel)(_dim3(grid), _dim3(block), tuple(packed),
                                         shared_mem=shared)
        stop.record()
        stop.synchronize()
        self.milliseconds.append(cp.cuda.get_elapsed_time(start, stop))
        for a, d in zip(args, on_gpu, strict=True):
            if d is not None:
                np.copyto(a, cp.asnumpy(d))


def _dim3(value: Any) -> tuple[int, int, int]:
    dims = (int(value),) if np.isscalar(value) else tuple(int(v) for v in value)
    return (*dims, *(1,) * (3 - len(dims)))  # type: ignore[return-value]


def parse_workload(text: str) -> tuple[str, dict[str, int]]:
    """``"mm3"`` or ``"mm3:size=192,..."``: a workload name and integer parameters."""
    name, _, rest = text.partition(":")
    params = dict(item.split("=", 1) for item in rest.split(",") if item)
    return name, {k: int(v) for k, v in params.items()}


def workload_row(text: str, settings: Settings, gpu: str, on_gpu: bool, folder: Path,
                 repeats: int) -> dict:
    name, params = parse_workload(text)
    w = get_workload(name, settings=settings)
    sink = MemoryTraceSink()
    emu = w.run(sink=sink, **params)
    timings = simulate_kernels(sink.kernels, gpu)
    row: dict[str, Any] = {
        "workload": text, "params": emu.params, "launches": emu.n_launches,
        "emulator_error": emu.max_error, "emulator_s": emu.seconds,
        "predicted_us": sum(t.time_us for t in timings),
    }
    if on_gpu:
        launcher = GpuLauncher(w.ptx(), folder)
        w.replay(launcher, **params)  # first run: module load and JIT of the PTX
        totals, kernels = [], []
        for _ in range(repeats):
            launcher.milliseconds.clear()
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                    torch.profiler.ProfilerActivity.CUDA]) as prof:
                outputs, reference = w.replay(launcher, **params)
            totals.append(1000 * sum(launcher.milliseconds))
            kernels.append(kernel_time_us(prof, set(launcher.params)))
        row.update(gpu_error=max_error(outputs, reference),
                   gpu_vs_emulator=max_error(outputs, emu.outputs),
                   measured_us=statistics.median(kernels) or None,
                   launch_wall_us=statistics.median(totals), kernel_runs_us=kernels,
                   gpu_launches=len(launcher.milliseconds))
    return row


def kernel_time_us(prof: Any, names: set[str] | None = None) -> float:
    """The GPU's own time in its activities (CUPTI, through torch's profiler), in us: the
    named kernels only, or every kernel, copy and fill when ``names`` is None."""
    total = 0.0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and (names is None or e.name in names):
            total += getattr(e, "device_time_total", 0.0) or getattr(e, "cuda_time_total", 0.0)
    return total


def warm_up_gpu(seconds: float = 1.0) -> None:
    """Keep the GPU busy for a moment: an idle GPU runs at a fraction of its clock."""
    a = torch.randn(4096, 4096, device="cuda")
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        a @ a
        torch.cuda.synchronize()


def print_workloads(rows: list[dict], gpu: str) -> None:
    print(f"\n1. workloads: GPU (CuPy, same PTX, same inputs) vs the PTX emulator; "
          f"predicted = the timing model ({gpu}) on the emulator's traces")
    print(f"{'workload':24}{'launches':>9}{'|gpu-emu|':>11}{'gpu err':>10}{'emu err':>10}"
          f"{'kernels us':>12}{'launch wall us':>16}{'predicted us':>14}{'pred/kernels':>14}")
    for r in rows:
        if "error" in r:
            print(f"{r['workload']:24} failed: {r['error']}")
            continue
        meas = r.get("measured_us")
        ratio = f"{r['predicted_us'] / meas:.2f}" if meas else "-"
        print(f"{r['workload']:24}{r['launches']:>9}{_fmt(r.get('gpu_vs_emulator')):>11}"
              f"{_fmt(r.get('gpu_error')):>10}{_fmt(r['emulator_error']):>10}"
              f"{_fmt(meas, '.1f'):>12}{_fmt(r.get('launch_wall_us'), '.1f'):>16}"
              f"{r['predicted_us']:>14.1f}{ratio:>14}")


def _fmt(value: float | None, spec: str = ".1e") -> str:
    return "-" if value is None else format(value, spec)


# -- the backend ---------------------------------------------------------------------------

def build_module(source: str, name: str, settings: Settings, reference: torch.nn.Module,
                 init: list[Any]) -> torch.nn.Module:
    """``ModelNew`` of a candidate module's source, its kernels loaded under ``settings``."""
    activate(BackendRegistry(settings))
    mod = types.ModuleType(name)
    exec(compile(source, name, "exec"), mod.__dict__)
    model = mod.ModelNew(*init).eval()
    model.load_state_dict(reference.state_dict(), strict=False)
    return model


def _max_diff(a: Any, b: Any) -> float:
    xs = a if isinstance(a, tuple | list) else (a,)
    ys = b if isinstance(b, tuple | list) else (b,)
    return max(float((x.detach().cpu().double() - y.detach().cpu().double()).abs().max())
               for x, y in zip(xs, ys, strict=True))


def candidates_for(task: Task) -> list[tuple[str, str]]:
    """(label, module source): the lowered CUDA module and any hand-written CUDA candidate."""
    out = [("lowered", lower_task(task, "cuda").candidate.source)]
    hand = ROOT / "examples" / "candidates" / f"{task.path.stem}_cuda.py"
    if hand.is_file():
        out.append((hand.name, hand.read_text()))
    return out


def task_rows(path: Path, on_gpu: bool, rounds: int, with_compile: bool) -> list[dict]:
    task = Task.from_path(path)
    module = task.module()
    torch.manual_seed(0)
    init = init_inputs_for(module)
    reference = module.Model(*init).eval()
    contract = derive_contract(task)
    small = min((variant_inputs(module, v, 1) for v in contract.variants),
                key=lambda xs: sum(x.numel() for x in xs if isinstance(x, torch.Tensor)))
    nominal = module.get_inputs()
    rows = []
    for label, source in candidates_for(task):
        row: dict[str, Any] = {"task": task.name, "kernel": label,
                               "shape": [list(x.shape) for x in small
                                         if isinstance(x, torch.Tensor)]}
        try:
            with torch.no_grad():
                expected = reference(*small)
                emu = build_module(source, f"{task.name}_emu",
                                   Settings(backend="cuda", cuda_emulator=True), reference, init)
                start = time.perf_counter()
                got_emu = emu(*small)
                row["emulator_s"] = time.perf_counter() - start
                row["emulator_vs_torch"] = _max_diff(got_emu, expected)
                if on_gpu:
                    gpu = build_module(source, f"{task.name}_gpu", Settings(backend="cuda"),
                                       reference, init).cuda()
                    got_gpu = gpu(*[_cuda(x) for x in small])
                    row["gpu_vs_torch"] = _max_diff(got_gpu, expected)
                    row["gpu_vs_emulator"] = _max_diff(got_gpu, got_emu)
                    sides = {"eager": reference.cuda(), "kernel": gpu}
                    if with_compile:
                        sides["compiled"] = torch.compile(reference)
                    row.update(speed(sides, [_cuda(x) for x in nominal], rounds))
                    reference.cpu()
        except Exception as exc:  # one kernel's failure is a row, not the end of the check
            row["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
            row["traceback"] = traceback.format_exc(limit=-3)
        rows.append(row)
    return rows


def _cuda(x: Any) -> Any:
    return x.cuda() if isinstance(x, torch.Tensor) else x


def speed(sides: dict[str, Any], inputs: list[Any], rounds: int) -> dict[str, float]:
    """Each side per call (each call then a synchronisation), interleaved rounds: medians in us
    (``<side>_us``) and ``speedup`` (eager over kernel), ``compile_speedup`` (eager over
    compiled) when those sides are there."""
    def per_call(fn, repeats: int) -> float:
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(repeats):
            fn(*inputs)
            torch.cuda.synchronize()
        return (time.perf_counter() - start) / repeats * 1e6

    once = max(per_call(fn, 3) for fn in sides.values())
    repeats = max(5, int(0.05e6 / max(once, 1.0)))
    samples: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, fn in sides.items():
            samples[name].append(per_call(fn, repeats))
    out = {f"{name}_us": statistics.median(v) for name, v in samples.items()}
    for name, fn in sides.items():  # the GPU's own time per call, host overhead left out
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(10):
                fn(*inputs)
            torch.cuda.synchronize()
        out[f"{name}_gpu_us"] = kernel_time_us(prof) / 10
    out["speedup"] = out["eager_us"] / out["kernel_us"]
    if "compiled_us" in out:
        out["compile_speedup"] = out["eager_us"] / out["compiled_us"]
    return out


def print_tasks(rows: list[dict], on_gpu: bool) -> None:
    print("\n2. backend: each kernel on the task's smallest shape variant, max |difference|")
    print(f"{'task':26}{'kernel':24}{'emu vs torch':>13}{'gpu vs torch':>13}{'gpu vs emu':>11}"
          f"{'emu s':>8}")
    for r in rows:
        if "error" in r and "emulator_vs_torch" not in r:
            print(f"{r['task']:26}{r['kernel']:24} failed: {r['error']}")
            continue
        print(f"{r['task']:26}{r['kernel']:24}{_fmt(r.get('emulator_vs_torch')):>13}"
              f"{_fmt(r.get('gpu_vs_torch')):>13}{_fmt(r.get('gpu_vs_emulator')):>11}"
              f"{r['emulator_s']:>8.1f}" + (f"  failed: {r['error']}" if "error" in r else ""))
    if not on_gpu:
        return
    print("\n3. speed on the GPU at the task's own sizes (per call, synchronised; medians, us;"
          " ratios over eager)")
    print("   (gpu: the GPU's own time per call from CUPTI, host overhead left out)")
    print(f"{'task':26}{'kernel':24}{'eager us':>10}{'kernel us':>11}{'kernel':>8}"
          f"{'compiled us':>13}{'compiled':>9}{'eager gpu':>11}{'kernel gpu':>12}")
    for r in rows:
        if "speedup" in r:
            comp = (f"{r['compiled_us']:>13.1f}{r['compile_speedup']:>8.2f}x"
                    if "compiled_us" in r else f"{'-':>13}{'-':>9}")
            print(f"{r['task']:26}{r['kernel']:24}{r['eager_us']:>10.1f}{r['kernel_us']:>11.1f}"
                  f"{r['speedup']:>7.2f}x{comp}{r['eager_gpu_us']:>11.1f}"
                  f"{r['kernel_gpu_us']:>12.1f}")


# -- main ------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", nargs="*", default=list(WORKLOADS),
                    help="names, each with optional parameters: mm3 mm3:size=192")
    ap.add_argument("--tasks", nargs="*", type=Path,
                    default=[ROOT / "examples" / "tasks" / f"{t}.py" for t in TASKS])
    ap.add_argument("--gpu", default="h100", help="the timing model's GPU configuration")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds")
    ap.add_argument("--compile", action="store_true",
                    help="time torch.compile of the reference beside eager and the kernel")
    ap.add_argument("--emulator-only", action="store_true",
                    help="run the emulator halves alone (no GPU needed)")
    ap.add_argument("--json", type=Path, default=None, help="also write every row as JSON")
    args = ap.parse_args(argv)
    device = cuda_device()
    if device is None and not args.emulator_only:
        print("no CUDA device through CuPy here (needs a GPU, its driver and cupy); "
              "--emulator-only runs the emulator halves alone", file=sys.stderr)
        return 2
    on_gpu = device is not None and not args.emulator_only
    print(f"device: {device or 'none'}; torch {torch.__version__}"
          f"{' cuda ' + str(torch.version.cuda) if torch.version.cuda else ''}")
    settings = Settings(backend="cuda")
    workloads = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.workloads:
            try:
                if on_gpu:
                    warm_up_gpu()
                workloads.append(workload_row(name, settings, args.gpu, on_gpu, Path(tmp),
                                              args.rounds))
            except Exception as exc:
                workloads.append({"workload": name, "error": f"{type(exc).__name__}: {exc}"})
            print(f"  workload {name}: done", flush=True)
    print_workloads(workloads, args.gpu)
    tasks: list[dict] = []
    if args.json:
        args.json.write_text(json.dumps({"device": device, "workloads": workloads},
                                        indent=2, default=str))
    for path in args.tasks:
        if on_gpu:
            warm_up_gpu()
        tasks += task_rows(path, on_gpu, args.rounds, args.compile)
        print(f"  task {path.stem}: done", flush=True)
        if args.json:  # after every task: a run stopped at its time limit keeps what it did
            args.json.write_text(json.dumps({"device": device, "workloads": workloads,
                                             "tasks": tasks}, indent=2, default=str))
    print_tasks(tasks, on_gpu)
    return 0


if __name__ == "__main__":
    sys.exit(main())
