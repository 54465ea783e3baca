"""The compiled timing engine: decode to arrays, then run the numba event loop.

Same interface and same results as :class:`._timing_reference.ReferenceEngine` (tests compare
them cycle for cycle); about 10-50x faster. Needs numba (``pip install numba``); without it
:func:`available` is False and the timing model uses the reference engine.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Iterator

import numpy as np

from kernelwright.tools.gpusim._timing_arrays import decoder_for
from kernelwright.tools.gpusim.gpus import GPUConfig
from kernelwright.tools.gpusim.records import WarpStream

logger = logging.getLogger(__name__)


def available() -> bool:
    """True when numba imports (it may be installed yet broken, e.g. by a shadowing module)."""
    if importlib.util.find_spec("numba") is None:
        return False
    try:
        import numba  # noqa: F401
    except Exception as exc:  # numba raises more than ImportError when its imports break
        logger.warning("numba is installed but does not import (%s); using the reference "
                       "timing engine", exc)
        return False
    return True


class ArrayCache:
    """A sectored LRU cache as arrays (``count`` caches of one geometry), for the compiled engine.

    ``tags``, ``state`` (valid sectors | dirty sectors << 4; 0 = empty way) and ``stamp``
    (last use, from ``clock``) have shape (count, sets, ways); sets are indexed as in
    :class:`._memsys.SectorCache`.
    """

    def __init__(self, count: int, size_bytes: int, assoc: int, line_bytes: int = 128) -> None:
        ways = max(1, assoc)
        sets = max(1, size_bytes // (line_bytes * ways))
        self.tags = np.empty((count, sets, ways), np.int64)  # read only where state != 0
        self.state = np.zeros((count, sets, ways), np.uint8)
        self.stamp = np.empty((count, sets, ways), np.int64)
        self.clock = 0

    def __repr__(self) -> str:
        return f"ArrayCache{self.tags.shape}"

    def clean(self) -> int:
        """Mark every sector clean (written back); returns how many were dirty."""
        from kernelwright.tools.gpusim._timing_kernels import cache_clean

        return int(cache_clean(self.state))


class CompiledEngine:
    """Simulates one kernel; ``run()`` returns its cycle count, counters stay in ``c``."""

    def __init__(self, gpu: GPUConfig, ctas_per_sm: int, ctas: Iterator[list[WarpStream]],
                 policy: str = "gto", shared_per_sm: int = 0,
                 l2: ArrayCache | None = None) -> None:
        self.gpu, self.ctas_per_sm, self._ctas, self.lrr = gpu, ctas_per_sm, ctas, policy == "lrr"
        self.shared_per_sm = shared_per_sm
        self.l2 = l2 if l2 is not None else ArrayCache(1, gpu.l2_bytes, gpu.l2_assoc,
                                                       gpu.line_bytes)
        self.c: dict[str, float] = {}

    def run(self) -> float:
        """Simulate until every thread block has finished; returns the last finish cycle."""
        from kernelwright.tools.gpusim import _timing_kernels as tk

        g = self.gpu
        k = decoder_for(g).decode(self._ctas)
        n_warps, n_ctas = len(k.w_start), len(k.c_nw)
        # at most this many warps are resident at once; SMs beyond the block count stay idle
        slots = max(1, min(g.num_sms * self.ctas_per_sm * k.max_warps_per_cta, n_warps))
        l1 = ArrayCache(max(1, min(g.num_sms, n_ctas)), g.l1_bytes_for(self.shared_per_sm),
                        g.l1_assoc, g.line_bytes)
        n_sched = g.num_sms * g.schedulers_per_sm
        fs = np.zeros(3, np.float64)
        ist = np.array([0, 0, self.l2.clock], np.int64)
        cnt = np.zeros(len(tk.COUNTERS), np.int64)
        gp = np.array([g.l2_bytes_per_cycle, g.dram_bytes_per_cycle, g.l2_latency,
                       g.dram_latency, 1.0 / g.lsu_lines_per_cycle, g.l1_latency,
                       g.barrier_latency, g.atomic_latency, g.const_latency, g.shared_latency],
                      np.float64)
        ip = np.array([g.num_sms, g.schedulers_per_sm, self.ctas_per_sm, int(self.lrr)],
                      np.int64)
        f64, i64 = (lambda n: np.zeros(n, np.float64)), (lambda n: np.zeros(n, np.int64))
        end = tk.run(
            k.sig, k.ma, k.mb, k.lines, k.masks, k.s_cls, k.s_lat, k.s_unit, k.s_interval,
            k.s_src, k.s_dst, k.w_start, k.w_end, k.c_w0, k.c_nw,
            i64(n_warps), i64(n_warps), i64(n_warps), i64(n_warps), f64(n_warps),
            f64(n_warps), i64(n_warps), np.zeros(n_warps, np.bool_),
            i64(n_ctas), i64(n_ctas), i64(n_ctas), f64(n_ctas), f64(n_ctas),
            np.zeros((slots, k.n_regs), np.float64), np.arange(slots, dtype=np.int64),
            np.array([slots], np.int64),
            f64(slots + 1), i64(slots + 1), i64(slots + 1), i64(1),
            f64(n_sched), f64(n_sched * tk.NUM_UNITS), f64(g.num_sms), i64(g.num_sms),
            l1.tags, l1.state, l1.stamp, self.l2.tags, self.l2.state,
            self.l2.stamp, fs, ist, cnt, gp, ip)
        self.l2.clock = int(ist[2])
        self.c = dict(zip(tk.COUNTERS, cnt.tolist(), strict=True))
        self.c["thread_insts"] = k.thread_insts
        return float(end)

    def write_back(self) -> int:
        """Bytes still dirty in L2 at the end, now marked clean (see the reference engine)."""
        return 32 * self.l2.clean()
