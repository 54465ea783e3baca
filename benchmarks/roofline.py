"""Custom GEMM against the vendor SGEMM, and this machine's streaming bandwidth.

For each size it prints GFLOP/s of ``torch.mm`` (oneDNN/MKL SGEMM) and of kernelwright's
packed micro-kernel GEMM (tools/lower/microkernels, the code the C++ lowering emits), timed
interleaved (median of rounds), and their ratio; with ``--lowered`` also the whole lowered
C++ program of ``a @ b`` (custom kernel, no vendor call) through its Python module. Then the
stream triad ``a = b + s * c`` in GB/s (two reads and one write per element), as a C++/OpenMP
loop and as ``torch.add``. The machine's load average is printed with the figures.

    PYTHONPATH=. .venv/bin/python benchmarks/roofline.py
    PYTHONPATH=. .venv/bin/python benchmarks/roofline.py --sizes 512,1024 --lowered --isa avx2
    PYTHONPATH=. .venv/bin/python benchmarks/roofline.py --rows-only --mb 8   # memory-bound

``--rows``/``--rows-only`` add the memory-bound families on C++ (``roofline_rows.py``): GB/s
and the share of the measured C++ triad.
    PYTHONPATH=. .venv/bin/python benchmarks/roofline.py --sycl --no-triad   # SYCL GEMM only

``--sycl`` times the lowered SYCL program of ``a @ b`` (its custom kernel: the local-memory
staged, ``sycl::vec`` register-tiled GEMM of tools/lower/backends/sycl_gemm.py) against
``torch.mm`` instead of the C++ micro-kernel.
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import tempfile
import time
import types
from pathlib import Path

import torch

from kernelwright.spec import Task
from kernelwright.tools.backends import active_registry
from kernelwright.tools.lower import lower_task
from kernelwright.tools.lower.microkernels import isa_named, strided_gemm_source

SKINNY = [(2048, 64, 2048), (64, 2048, 2048)]  # M, N, K
TRIAD = r"""
extern "C" void triad(float* __restrict__ a, const float* __restrict__ b,
                      const float* __restrict__ c, float s, long n) {
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}
"""


def interleaved(fns: list, seconds: float) -> list[float]:
    """Median seconds per call of each function, timed in alternating rounds."""
    for f in fns:
        f()
    samples: list[list[float]] = [[] for _ in fns]
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(samples[0]) < 3:
        for s, f in zip(samples, fns, strict=True):
            t = time.perf_counter()
            f()
            s.append(time.perf_counter() - t)
    return [statistics.median(s) for s in samples]


def _ptr(t: torch.Tensor) -> ctypes.c_void_p:
    return ctypes.c_void_p(t.data_ptr())


def gemm_row(m: int, n: int, k: int, isa, seconds: float, lowered: bool) -> str:
    a, b, c = torch.randn(m, k), torch.randn(k, n), torch.empty(m, n)
    src = strided_gemm_source("kw_gemm", (1, m, n, k), (0, k, 1), (0, n, 1), isa=isa)
    lib = ctypes.CDLL(active_registry().get("cpp").build(src).artifact)
    fns = [lambda: torch.mm(a, b, out=c), lambda: lib.kw_gemm(_ptr(a), _ptr(b), _ptr(c),
                                                              None, None)]
    if lowered:
        fns.append(_lowered(m, n, k, a, b))
    times = interleaved(fns, seconds)
    want = torch.mm(a, b)
    fns[1]()
    err = float((c - want).abs().max() / want.abs().max())
    gf = [2 * m * n * k / t / 1e9 for t in times]
    row = f"{m:>5} x {n:>5} x {k:>5}  torch {gf[0]:7.1f}  custom {gf[1]:7.1f}  " \
          f"ratio {gf[1] / gf[0]:5.2f}"
    if lowered:
        row += f"  lowered {gf[2]:7.1f} ({gf[2] / gf[0]:4.2f})"
    return row + f"  rel.err {err:.1e}"


def sycl_row(m: int, n: int, k: int, seconds: float) -> str:
    a, b = torch.randn(m, k), torch.randn(k, n)
    run = _lowered(m, n, k, a, b, "sycl")
    t_torch, t_sycl = interleaved([lambda: torch.mm(a, b), run], seconds)
    want = torch.mm(a, b)
    err = float((run() - want).abs().max() / want.abs().max())
    g_t, g_s = 2 * m * n * k / t_torch / 1e9, 2 * m * n * k / t_sycl / 1e9
    return (f"{m:>5} x {n:>5} x {k:>5}  torch {g_t:7.1f}  sycl lowered {g_s:7.1f}  "
            f"ratio {g_s / g_t:5.2f}  rel.err {err:.1e}")


def _lowered(m: int, n: int, k: int, a: torch.Tensor, b: torch.Tensor,
             backend: str = "cpp"):
    folder = Path(tempfile.mkdtemp())
    path = folder / "mm.py"
    path.write_text("import torch\nfrom torch import nn\n\n\nclass Model(nn.Module):\n"
                    "    def forward(self, a, b):\n        return a @ b\n\n\n"
                    f"def get_inputs():\n    return [torch.randn({m}, {k}), "
                    f"torch.randn({k}, {n})]\n\n\ndef get_init_inputs():\n    return []\n")
    prog = lower_task(Task.from_path(path), backend)
    prog = prog.with_params({p: "kernel" for p in prog.space if p.endswith(".impl")})
    mod = types.ModuleType("lowered")
    exec(compile(prog.candidate.source, "lowered", "exec"), mod.__dict__)
    model = mod.ModelNew()
    return lambda: model(a, b)


def triad_gbs(mb: int, seconds: float, timer=None) -> tuple[float, float]:
    """GB/s of the C++/OpenMP triad and of ``torch.add`` on ``mb`` MB arrays."""
    n = mb * 2**20 // 4
    a, b, c = torch.empty(n), torch.randn(n), torch.randn(n)
    lib = ctypes.CDLL(active_registry().get("cpp").build(TRIAD).artifact)
    s = ctypes.c_float(0.5)
    t_cpp, t_torch = (timer or interleaved)([lambda: lib.triad(_ptr(a), _ptr(b), _ptr(c), s,
                                                               ctypes.c_long(n)),
                                             lambda: torch.add(b, c, alpha=0.5, out=a)],
                                            seconds)
    return 3 * n * 4 / t_cpp / 1e9, 3 * n * 4 / t_torch / 1e9


def triad_rows(mb: int, seconds: float) -> list[str]:
    n = mb * 2**20 // 4
    a, b, c = torch.empty(n), torch.randn(n), torch.randn(n)
    lib = ctypes.CDLL(active_registry().get("cpp").build(TRIAD).artifact)
    s = ctypes.c_float(0.5)
    t_cpp, t_torch = interleaved([lambda: lib.triad(_ptr(a), _ptr(b), _ptr(c), s,
                                                    ctypes.c_long(n)),
                                  lambda: torch.add(b, c, alpha=0.5, out=a)], seconds)
    return [f"stream triad {mb} MB/array: C++/OpenMP {3 * n * 4 / t_cpp / 1e9:6.1f} GB/s, "
            f"torch.add {3 * n * 4 / t_torch / 1e9:6.1f} GB/s"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="128,256,512,1024,2048")
    ap.add_argument("--no-skinny", action="store_true")
    ap.add_argument("--lowered", action="store_true", help="also time the lowered program")
    ap.add_argument("--isa", default="auto", help="avx512, avx2, generic or auto")
    ap.add_argument("--seconds", type=float, default=2.0, help="timing per size")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: as set)")
    ap.add_argument("--rows", action="store_true", help="also the memory-bound families")
    ap.add_argument("--rows-only", action="store_true", help="only the memory-bound families")
    ap.add_argument("--mb", type=int, default=8, help="input size of the memory-bound families")
    ap.add_argument("--sycl", action="store_true", help="the lowered SYCL GEMM vs torch.mm")
    ap.add_argument("--no-triad", action="store_true", help="skip the stream triad")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    isa = isa_named(args.isa)
    print(f"isa {isa.name}, torch threads {torch.get_num_threads()}, "
          f"loadavg {Path('/proc/loadavg').read_text().split()[:3]}")
    if args.rows or args.rows_only:
        from roofline_rows import fastest, rows_rows

        cpp_gbs, torch_gbs = triad_gbs(64, args.seconds, fastest)
        print(f"triad 64 MB/array: C++ {cpp_gbs:.1f} GB/s, torch.add {torch_gbs:.1f} GB/s")
        rows_rows(args.mb, args.seconds, cpp_gbs)
        if args.rows_only:
            print(f"loadavg after {Path('/proc/loadavg').read_text().split()[:3]}")
            return
    shapes = [(s, s, s) for s in map(int, args.sizes.split(","))]
    shapes += [] if args.no_skinny else SKINNY
    for m, n, k in shapes:
        row = (sycl_row(m, n, k, args.seconds) if args.sycl
               else gemm_row(m, n, k, isa, args.seconds, args.lowered))
        print(row, flush=True)
    for line in [] if args.no_triad else triad_rows(64, args.seconds):
        print(line)
    print(f"loadavg after {Path('/proc/loadavg').read_text().split()[:3]}")


if __name__ == "__main__":
    main()
