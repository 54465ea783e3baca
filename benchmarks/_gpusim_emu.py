"""PTX emulator speed (imported by benchmarks/gpusim.py; also runnable on its own).

* warp-instructions and thread-instructions per CPU-second on three workloads (3mm, cfd,
  phi-2-shaped decode) and on one large elementwise kernel (GELU over 1M elements);
* the emulated-vs-numpy time ratio for 3mm (same matrices, ``(A @ B) @ (C @ D)`` in numpy).

Best of ``repeats`` runs of CPU time (``time.process_time``, as benchmarks/gpusim.py: the
machine is shared and wall time is noisy); nvcc compilation is cached and excluded.

    python benchmarks/_gpusim_emu.py [--repeats 2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from kernelwright.config import Settings
from kernelwright.tools.gpusim import launch
from kernelwright.tools.gpusim.workloads import get_workload
from kernelwright.tools.gpusim.workloads._nvcc import compile_ptx

Row = tuple[str, float, str]
WORKLOADS = {"mm3": {"size": 128}, "cfd": {"elements": 4096, "iterations": 3},
             "phi2": {"prompt": 8, "steps": 4}}  # fmt: skip
GELU = r"""
extern "C" __global__ void gelu(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i];
    y[i] = 0.5f * v * (1.f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v))); }
}
"""


def _best(fn, repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def emulator_throughput(repeats: int = 2) -> dict[str, dict[str, float]]:
    """Per case: seconds, launches, warp/thread instructions and per-second rates."""
    out: dict[str, dict[str, float]] = {}
    for name, params in WORKLOADS.items():
        wl = get_workload(name, settings=Settings())
        wl.ptx()  # compile outside the clock
        secs, run = _best(lambda wl=wl, params=params: wl.run(**params), repeats)
        out[name] = _rates(secs, run.n_launches, run.warp_instructions, run.thread_instructions)
    ptx = compile_ptx(GELU, Settings())
    n = 1 << 20
    x, y = np.random.default_rng(0).standard_normal(n, dtype=np.float32), np.zeros(n, np.float32)
    secs, st = _best(lambda: launch(ptx, "gelu", n // 256, 256, [x, y, n]), repeats)
    out["gelu_1M"] = _rates(secs, 1, st.warp_instructions, st.thread_instructions)
    return out


def _rates(secs: float, launches: int, warp: int, thread: int) -> dict[str, float]:
    return {"seconds": secs, "launches": launches, "warp_instructions": warp,
            "thread_instructions": thread, "warp_per_s": warp / secs,
            "thread_per_s": thread / secs}  # fmt: skip


def mm3_numpy_ratio(repeats: int = 2, size: int = 128) -> float:
    """Emulated 3mm time / numpy time for the same computation."""
    wl = get_workload("mm3", settings=Settings())
    wl.ptx()
    emu, _ = _best(lambda: wl.run(size=size), repeats)
    rng = np.random.default_rng(0)
    a, b, c, d = (rng.random((size, size), dtype=np.float32) for _ in range(4))
    ref, _ = _best(lambda: [(a @ b) @ (c @ d) for _ in range(100)], repeats)
    return emu / (ref / 100)


def rows(repeats: int = 2) -> list[Row]:
    """Benchmark rows for benchmarks/gpusim.py: (metric, value, unit)."""
    out: list[Row] = []
    for name, r in emulator_throughput(repeats).items():
        out.append((f"emulator {name} warp-instructions", r["warp_per_s"] / 1e6, "M/s"))
        out.append((f"emulator {name} thread-instructions", r["thread_per_s"] / 1e6, "M/s"))
    out.append(("emulator 3mm (128^3) time vs numpy", mm3_numpy_ratio(repeats), "x slower"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    for name, value, unit in rows(args.repeats):
        print(f"{name:<45} {value:>12,.2f}  {unit}")


if __name__ == "__main__":
    main()
