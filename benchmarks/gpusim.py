"""GPU-simulation speed: timing model, trace size, trace reader (and the emulator, if present).

Prints two tables.

Before/after: the timing model's speed in warp-instructions per second with the reference
engine (plain Python, the model before it was compiled) and the compiled engine (numba), side by
side with their ratio and a check that both give the same cycles - on synthetic kernels that
stress the scheduler (ALU chains), coalesced and strided global memory and shared memory, and on
emulator-written traces of workloads (needs nvcc). The compiled engine is warmed up first (its
one-time compilation, or loading it from numba's cache, is printed separately).

Then one table of:

* trace bytes per warp-instruction of what ``TraceDirWriter`` writes (plain and ``.xz``);
* reader throughput (warp-instructions and MB per second), plain and ``.xz``;
* the same on emulator-written traces of three workloads (needs nvcc);
* the emulator's rows from ``benchmarks/_gpusim_emu.py`` when that file exists (it must
  define ``rows() -> list[tuple[str, float, str]]``: metric, value, unit).

Speeds are per CPU-second (``time.process_time``), best of ``--repeats`` runs: the machine is
shared, and CPU time with best-of is the least noisy estimate.

    python benchmarks/gpusim.py [--repeats 3] [--ctas 272] [--workloads mm3,gaussian,bfs]
                                [--engines-only]
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kernelwright.tools.gpusim._synthetic import (
    alu,
    bar,
    exit_,
    ld_global,
    ld_shared,
    st_global,
    st_shared,
    synthetic_kernel,
)
from kernelwright.tools.gpusim.gpus import GPUConfig, gpu_by_name
from kernelwright.tools.gpusim.records import TraceInstruction
from kernelwright.tools.gpusim.timing import engine_kind, simulate_kernel, simulate_trace_dir
from kernelwright.tools.gpusim.traces import InMemoryKernel, TraceDirWriter, iter_kernels

Row = tuple[str, float, str]
Body = Callable[[int, int], list[TraceInstruction]]


def _alu_chain(cta: int, warp: int) -> list[TraceInstruction]:
    out = [alu(0x10 * i, f"R{4 + i % 6}", (f"R{4 + (i + 5) % 6}", "R2")) for i in range(96)]
    return [*out, exit_(0x1000)]


def _streaming(stride: int) -> Body:
    def body(cta: int, warp: int) -> list[TraceInstruction]:
        base = 0x7F0000000000 + (cta * 8 + warp) * 32 * stride * 16
        out: list[TraceInstruction] = []
        for i in range(16):
            out += [ld_global(0x30 * i, "R4", base + 32 * stride * i, stride),
                    alu(0x30 * i + 0x10, "R5", ("R4", "R5")),
                    st_global(0x30 * i + 0x20, "R5", base + (1 << 32) + 32 * stride * i, stride)]
        return [*out, exit_(0x1000)]

    return body


def _shared_tile(cta: int, warp: int) -> list[TraceInstruction]:
    out = [ld_global(0, "R4", 0x7F0000000000 + (cta * 8 + warp) * 128, 4),
           st_shared(0x10, "R4", warp * 128, 4), bar(0x20)]
    for i in range(32):
        out += [ld_shared(0x30 + 0x20 * i, "R6", (i * 128) % 1024, 4),
                alu(0x40 + 0x20 * i, "R7", ("R6", "R7"))]
    return [*out, exit_(0x1000)]


def kernels(ctas: int) -> dict[str, InMemoryKernel]:
    """The synthetic kernels the benchmark runs."""
    return {
        "alu chain": synthetic_kernel(ctas=ctas, warps_per_cta=8, body=_alu_chain),
        "coalesced ld/st": synthetic_kernel(ctas=ctas, warps_per_cta=8, body=_streaming(4)),
        "strided ld/st": synthetic_kernel(ctas=ctas // 4, warps_per_cta=8, body=_streaming(64)),
        "shared tile": synthetic_kernel(ctas=ctas, warps_per_cta=8, body=_shared_tile,
                                        shmem=1024),
    }


def _best(fn: Callable[[], float], repeats: int) -> float:
    return max(fn() for _ in range(repeats))


def model_rows(ks: dict[str, InMemoryKernel], repeats: int) -> list[Row]:
    """Timing-model speed per synthetic kernel (the default engine)."""
    gpu = gpu_by_name("rtx2080ti")
    rows = []
    for name, k in ks.items():
        speed = _best(lambda k=k: _model_speed(k, gpu), repeats)
        rows.append((f"timing model, {name}", speed, "warp-inst/s"))
    return rows


def _model_speed(kernel: InMemoryKernel, gpu: GPUConfig, engine: str = "auto") -> float:
    start = time.process_time()
    timing = simulate_kernel(kernel, gpu, engine=engine)
    return timing.warp_instructions / (time.process_time() - start)


def _engine_run(kernels: list, gpu: GPUConfig, engine: str) -> tuple[float, list[int]]:
    """Warp-instructions per CPU-second over ``kernels``, and their cycles."""
    start = time.process_time()
    timings = [simulate_kernel(k, gpu, engine=engine) for k in kernels]
    seconds = time.process_time() - start
    return sum(t.warp_instructions for t in timings) / seconds, [t.cycles for t in timings]


def before_after(groups: dict[str, list], repeats: int) -> list[tuple[str, float, float, bool]]:
    """Per group of kernels: reference speed, compiled speed, same cycles."""
    gpu = gpu_by_name("rtx2080ti")
    out = []
    for name, kernels in groups.items():
        ref = [_engine_run(kernels, gpu, "reference") for _ in range(repeats)]
        fast = [_engine_run(kernels, gpu, "compiled") for _ in range(repeats)]
        same = all(r[1] == ref[0][1] for r in ref + fast)
        out.append((name, max(r[0] for r in ref), max(f[0] for f in fast), same))
    return out


def workload_kernels(names: tuple[str, ...]) -> dict[str, list]:
    """Emulator-written traces of workloads, held in memory (empty without nvcc)."""
    if shutil.which("nvcc") is None:
        return {}
    from kernelwright.config import Settings
    from kernelwright.tools.gpusim.traces import MemoryTraceSink
    from kernelwright.tools.gpusim.workloads import get_workload

    out = {}
    for name in names:
        sink = MemoryTraceSink()
        get_workload(name, settings=Settings()).run(sink=sink)
        out[f"workload {name} ({len(sink.kernels)} kernels)"] = sink.kernels
    return out


def print_before_after(ks: dict[str, InMemoryKernel], workloads: tuple[str, ...],
                       repeats: int) -> None:
    if engine_kind("auto") != "compiled":
        print("compiled engine: numba is not installed (pip install numba); before/after skipped")
        return
    start = time.perf_counter()
    simulate_kernel(next(iter(ks.values())), "rtx2080ti", engine="compiled")
    print(f"compiled engine warm-up (compile or load numba's cache, and one kernel): "
          f"{time.perf_counter() - start:.1f} s wall")
    groups = {name: [k] for name, k in ks.items()} | workload_kernels(workloads)
    rows = before_after(groups, repeats)
    width = max(len(r[0]) for r in rows)
    print(f"{'timing model, warp-inst/s'.ljust(width)}  {'reference':>12}  {'compiled':>12}"
          f"  {'ratio':>7}  same cycles")
    for name, ref, fast, same in rows:
        print(f"{name.ljust(width)}  {ref:>12,.0f}  {fast:>12,.0f}  {fast / ref:>6.1f}x"
              f"  {'yes' if same else 'NO'}")
    print()


def trace_rows(ks: dict[str, InMemoryKernel], repeats: int) -> list[Row]:
    """Bytes per warp-instruction written, and reader throughput, plain and xz."""
    rows: list[Row] = []
    for xz in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            with TraceDirWriter(tmp, xz=xz) as w:
                for k in ks.values():
                    w.begin_kernel(k.info)
                    for s in k.streams:
                        w.warp(s)
            size = sum(p.stat().st_size for p in Path(tmp).iterdir())
            tag = "synthetic, xz" if xz else "synthetic"
            rows.append((f"trace size ({tag})", size / w.warp_instructions, "bytes/warp-inst"))
            speed = _best(lambda t=tmp: _read_speed(Path(t)), repeats)
            rows.append((f"reader ({tag})", speed, "warp-inst/s"))
            if not xz:
                rows.append((f"reader ({tag})", speed * size / w.warp_instructions / 1e6,
                             "MB/s of trace file"))
    return rows


def _read_speed(path: Path) -> float:
    start, n = time.process_time(), 0
    for k in iter_kernels(path):
        for w in k.warps():
            n += len(w.instructions)
    return n / (time.process_time() - start)


def workload_rows(names: tuple[str, ...] = ("mm3", "gaussian", "bfs")) -> list[Row]:
    """Emulator-written traces of real workloads: bytes/warp-inst, reader and model speed."""
    if shutil.which("nvcc") is None:
        return [("workload traces", float("nan"), "skipped: nvcc not on PATH")]
    from kernelwright.config import Settings
    from kernelwright.tools.gpusim.workloads import get_workload

    rows: list[Row] = []
    gpu = gpu_by_name("rtx2080ti")
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            with TraceDirWriter(tmp) as w:
                get_workload(name, settings=Settings()).run(sink=w)
            size = sum(p.stat().st_size for p in Path(tmp).iterdir())
            rows.append((f"trace size, {name}", size / w.warp_instructions, "bytes/warp-inst"))
            with TraceDirWriter(Path(tmp) / "xz", xz=True) as wx:
                get_workload(name, settings=Settings()).run(sink=wx)
            xz_size = sum(p.stat().st_size for p in (Path(tmp) / "xz").iterdir())
            rows.append((f"trace size, {name}, xz", xz_size / wx.warp_instructions,
                         "bytes/warp-inst"))
            rows.append((f"reader, {name}", _read_speed(Path(tmp)), "warp-inst/s"))
            start = time.process_time()
            simulate_trace_dir(tmp, gpu)
            speed = w.warp_instructions / (time.process_time() - start)
            rows.append((f"timing model, {name} (read+simulate)", speed, "warp-inst/s"))
    return rows


def emulator_rows() -> list[Row]:
    """Rows from benchmarks/_gpusim_emu.py (owned by gpusim-emu), when it exists."""
    path = Path(__file__).with_name("_gpusim_emu.py")
    if not path.exists():
        return [("emulator benchmark", float("nan"), "missing: benchmarks/_gpusim_emu.py")]
    spec = importlib.util.spec_from_file_location("_gpusim_emu", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_gpusim_emu"] = module
    spec.loader.exec_module(module)
    return list(module.rows())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ctas", type=int, default=272, help="CTAs per synthetic kernel")
    parser.add_argument("--workloads", default="mm3,gaussian,bfs",
                        help="comma-separated workloads for the before/after table ('' = none)")
    parser.add_argument("--engines-only", action="store_true",
                        help="print the before/after table only")
    args = parser.parse_args()
    ks = kernels(args.ctas)
    total = sum(len(w.instructions) for k in ks.values() for w in k.streams)
    print(f"{len(ks)} synthetic kernels, {total} warp-instructions, best of {args.repeats}")
    print_before_after(ks, tuple(w for w in args.workloads.split(",") if w), args.repeats)
    if args.engines_only:
        return
    rows = model_rows(ks, args.repeats) + trace_rows(ks, args.repeats)
    rows += workload_rows() + emulator_rows()
    width = max(len(r[0]) for r in rows)
    print(f"{'metric'.ljust(width)}  {'value':>14}  unit")
    for name, value, unit in rows:
        print(f"{name.ljust(width)}  {value:>14,.2f}  {unit}")


if __name__ == "__main__":
    main()
