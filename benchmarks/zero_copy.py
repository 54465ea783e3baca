"""What zero copy saves on the SYCL CPU device, and what building and launching cost.

Run: ``.venv/bin/python benchmarks/zero_copy.py`` (add ``--no-builds`` to skip the build
timings). Prints medians of interleaved repeats; absolute times vary up to 2x on shared
machines, so read the ratios.

1. vadd on torch tensors of 1M and 16M floats: host pointers passed directly (``data_ptr``)
   vs staged through shared USM (copy in, launch, copy every array back).
2. Build: first SYCL-RTC build of a never-seen source, a rebuild in the same process, the
   same source in a new process (SYCL's persistent cache); launch overhead of a tiny kernel.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import uuid
from functools import partial

import torch

from kernelwright.config import Settings
from kernelwright.tools.backends.sycl import SyclBackend

VADD = """
#include <sycl/sycl.hpp>
namespace syclexp = sycl::ext::oneapi::experimental;
extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))
void vadd(const float* a, const float* b, float* out, int n) {
  size_t i = sycl::ext::oneapi::this_work_item::get_nd_item<1>().get_global_id(0);
  if (i < (size_t)n) out[i] = a[i] + b[i];
}
"""
LOCAL = 256


def _median_ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def zero_copy(repeats: int) -> None:
    settings = Settings()
    direct = SyclBackend(settings, zero_copy=True)
    staged = SyclBackend(settings, zero_copy=False)
    kd, ks = direct.load_inline(VADD).vadd, staged.load_inline(VADD).vadd
    print(f"{'floats':>10} {'zero-copy ms':>13} {'shared-USM ms':>14} {'ratio':>7}")
    for n in (1 << 20, 1 << 24):
        a, b, out = torch.randn(n), torch.randn(n), torch.empty(n)
        size = ((n + LOCAL - 1) // LOCAL * LOCAL,)
        launch = {"global_size": size, "local_size": (LOCAL,)}
        run_d = partial(kd, a, b, out, n, **launch)
        run_s = partial(ks, a, b, out, n, **launch)
        run_d(), run_s()  # warm-up (JIT, page faults)
        d_ms, s_ms = [], []
        for _ in range(repeats):  # interleaved
            d_ms.append(_median_ms(run_d, 3))
            s_ms.append(_median_ms(run_s, 3))
        d, s = statistics.median(d_ms), statistics.median(s_ms)
        assert torch.equal(out, a + b)
        print(f"{n:>10} {d:>13.2f} {s:>14.2f} {s / d:>6.2f}x")


NEW_PROCESS = """
import time, sys
t = time.perf_counter()
from kernelwright.tools.backends.sycl import SyclBackend
from kernelwright.config import Settings
b = SyclBackend(Settings()); b.runtime
t1 = time.perf_counter(); r = b.build(sys.stdin.read()); t2 = time.perf_counter()
print(f"{t1 - t:.3f} {t2 - t1:.3f} {r.cached}")
"""


def builds() -> None:
    backend = SyclBackend(Settings())
    source = f"static const int kw_bench_{uuid.uuid4().hex} = 0;\n{VADD}"
    first = backend.build(source)
    again = backend.build(source)
    proc = subprocess.run([sys.executable, "-c", NEW_PROCESS], input=source, text=True,
                          capture_output=True, check=True)
    open_s, new_s, new_cached = proc.stdout.split()
    print(f"first build of a new source: {first.seconds:.2f} s (cached={first.cached})")
    print(f"rebuild, same process:      {again.seconds * 1e3:.3f} ms (cached={again.cached})")
    print(f"rebuild, new process:       {float(new_s):.2f} s (cached={new_cached}); "
          f"import + dpctl queue + shim load there: {float(open_s):.2f} s")
    kern = backend.load(first).vadd
    a, b, out = torch.randn(64), torch.randn(64), torch.empty(64)
    call = partial(kern, a, b, out, 64, global_size=(64,), local_size=(64,))
    call(wait=True)  # warm-up
    n = 2000
    t = time.perf_counter()
    for _ in range(n):
        call(wait=True)
    sync_us = (time.perf_counter() - t) / n * 1e6
    kernel_us = kern.last_ns / 1e3
    t = time.perf_counter()
    for _ in range(n):
        call(wait=False)
    backend.synchronize()
    async_us = (time.perf_counter() - t) / n * 1e6
    print(f"launch overhead (64 floats): {sync_us:.1f} us waited, {async_us:.1f} us queued "
          f"(kernel itself {kernel_us:.1f} us by event profiling)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--no-builds", action="store_true")
    args = parser.parse_args()
    print(f"torch threads: {torch.get_num_threads()}")
    zero_copy(args.repeats)
    if not args.no_builds:
        builds()


if __name__ == "__main__":
    main()
