"""A trace-driven, cycle-approximate reference timing model for GPU kernels.

It replays a kernel trace (from the PTX emulator or a real Accel-Sim trace) on a
:class:`~kernelwright.tools.gpusim.gpus.GPUConfig`:

* occupancy - CTAs per SM = min over limits of threads, warps, registers (allocated per warp in
  units of 256), shared memory and the CTA cap; CTAs start round-robin and refill SMs as they end;
* per SM, ``schedulers_per_sm`` warp schedulers issue one instruction per cycle from ready warps
  (greedy-then-oldest or loose round robin); an instruction waits for its registers' producers
  (scoreboard) and for its execution unit (per-class latency and issue interval);
* memory - lane addresses coalesce into 32-byte sectors of 128-byte lines; per-SM L1 (what shared
  memory leaves of the unified L1/shared capacity) and a shared L2 (set-associative, LRU,
  sectored); DRAM and L2 are bandwidth-limited queues with latency;
  shared memory costs one wavefront per distinct 4-byte word in the busiest of 32 banks;
* launches - L1s start cold every launch; the L2 starts cold too unless ``warm_l2`` (or an
  :class:`L2State` passed along) keeps its contents from the previous launch, so kernel B hits
  on lines kernel A left there (dirty lines are written back, off the clock, between launches).
  Memcpy commands in a trace folder do not touch the L2.

Every number it produces is "versus the reference model", not a measurement.

Two engines run these rules with identical results: ``"reference"`` (plain Python, the
specification) and ``"compiled"`` (numba; used by ``engine="auto"`` when numba is installed).

Example:
    >>> timings = simulate_trace_dir("traces/3mm", "rtx2080ti")  # doctest: +SKIP
    >>> [t.cycles for t in timings]  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from kernelwright.tools.gpusim import _timing_compiled
from kernelwright.tools.gpusim._memsys import SectorCache
from kernelwright.tools.gpusim._timing_compiled import ArrayCache, CompiledEngine
from kernelwright.tools.gpusim._timing_reference import ReferenceEngine
from kernelwright.tools.gpusim.gpus import GPUConfig, gpu_by_name
from kernelwright.tools.gpusim.records import KernelInfo, KernelTrace, WarpStream
from kernelwright.tools.gpusim.traces import SAMPLED_CTAS_KEY, iter_kernels

__all__ = [
    "ENGINES",
    "KernelTiming",
    "L2State",
    "Occupancy",
    "engine_kind",
    "occupancy",
    "simulate_kernel",
    "simulate_kernels",
    "simulate_trace_dir",
]

logger = logging.getLogger(__name__)
DEFAULT_NREGS = 32  # used when a trace's register count is missing or untrusted


class Occupancy(BaseModel):
    """How many CTAs of a kernel fit on one SM, and what limits it."""

    model_config = ConfigDict(frozen=True)

    ctas_per_sm: int
    warps_per_cta: int
    limiter: str
    fits: bool  # False: the CTA exceeds an SM limit (a real launch would fail)

    @property
    def warps_per_sm(self) -> int:
        """Resident warps per SM."""
        return self.ctas_per_sm * self.warps_per_cta


class KernelTiming(BaseModel):
    """What the reference model says about one kernel launch."""

    model_config = ConfigDict(frozen=True)

    kernel_id: int
    name: str
    gpu: str
    cycles: int  # extrapolated to the full grid when the trace holds a sample of its CTAs
    simulated_cycles: int
    time_us: float
    warp_instructions: int
    thread_instructions: int
    ipc: float  # warp instructions per cycle, whole GPU
    ctas_simulated: int
    grid_ctas: int
    occupancy: Occupancy
    waves: int
    l1_hit_rate: float | None
    l2_hit_rate: float | None
    dram_read_bytes: int
    dram_write_bytes: int  # evictions, plus lines still dirty at the end (not charged to cycles)
    global_load_sectors: int
    global_store_sectors: int
    shared_wavefronts: int
    shared_bank_conflicts: int  # wavefronts beyond the conflict-free minimum
    model_seconds: float  # wall time the model took

    @property
    def warp_instructions_per_second(self) -> float:
        """Model speed on this kernel."""
        return self.warp_instructions / self.model_seconds if self.model_seconds else 0.0


def occupancy(info: KernelInfo, gpu: GPUConfig) -> Occupancy:
    """CTAs per SM for ``info``'s block size, registers and shared memory on ``gpu``."""
    threads = math.prod(info.block)
    warps = max(1, math.ceil(threads / 32))
    nregs = info.nregs if 0 < info.nregs <= gpu.max_registers_per_thread else DEFAULT_NREGS
    unit = gpu.register_alloc_unit
    regs_per_warp = math.ceil(nregs * 32 / unit) * unit
    shmem = math.ceil(info.shmem / gpu.shared_alloc_unit) * gpu.shared_alloc_unit
    limits = {
        "max CTAs per SM": gpu.max_ctas_per_sm,
        "warps": gpu.max_warps_per_sm // warps,
        "threads": gpu.max_threads_per_sm // threads if threads else gpu.max_ctas_per_sm,
        "registers": (gpu.registers_per_sm // regs_per_warp) // warps,
        "shared memory": gpu.shared_bytes_per_sm // shmem if shmem else gpu.max_ctas_per_sm,
    }
    limiter = min(limits, key=limits.__getitem__)
    fits = limits[limiter] >= 1 and threads <= gpu.max_threads_per_cta
    if not fits:
        logger.warning("kernel %s: one CTA exceeds the %s of an SM on %s; simulating 1 per SM",
                       info.name, limiter, gpu.name)
    return Occupancy(ctas_per_sm=max(1, limits[limiter]), warps_per_cta=warps, limiter=limiter,
                     fits=fits)


def _group_ctas(warps: Iterator[WarpStream]) -> Iterator[list[WarpStream]]:
    """Group consecutive warps of the same CTA (traces list warps block by block)."""
    group: list[WarpStream] = []
    for w in warps:
        if group and w.cta != group[0].cta:
            yield group
            group = []
        group.append(w)
    if group:
        yield group


ENGINES = ("auto", "compiled", "reference")


def engine_kind(engine: str) -> str:
    """Resolve ``"auto"`` to ``"compiled"`` (numba installed) or ``"reference"``."""
    if engine not in ENGINES:
        raise ValueError(f"unknown timing engine {engine!r}; choose from {list(ENGINES)}")
    if engine == "auto":
        return "compiled" if _timing_compiled.available() else "reference"
    if engine == "compiled" and not _timing_compiled.available():
        raise ValueError("engine='compiled' needs numba; install it (pip install numba) or "
                         "use engine='reference'")
    return engine


class L2State:
    """The L2 contents one launch leaves to the next (what ``warm_l2`` carries).

    Example:
        >>> l2 = L2State("rtx2080ti")
        >>> a = simulate_kernel(k1, "rtx2080ti", l2=l2)  # doctest: +SKIP
        >>> b = simulate_kernel(k2, "rtx2080ti", l2=l2)  # hits on what k1 left  # doctest: +SKIP
    """

    def __init__(self, gpu: GPUConfig | str) -> None:
        self.gpu = gpu_by_name(gpu)
        self.kind: str | None = None
        self.cache: SectorCache | ArrayCache | None = None

    def __repr__(self) -> str:
        return f"L2State({self.gpu.name!r}, engine={self.kind!r})"

    def check(self, gpu: GPUConfig, kind: str) -> SectorCache | ArrayCache:
        """The cache for engine ``kind``, if ``gpu`` has the same L2 geometry (else ValueError)."""
        mine = (self.gpu.l2_bytes, self.gpu.l2_assoc, self.gpu.line_bytes)
        if (gpu.l2_bytes, gpu.l2_assoc, gpu.line_bytes) != mine:
            raise ValueError(f"this L2State was made for {self.gpu.name}'s L2; make a new "
                             f"L2State({gpu.name!r}) to simulate on {gpu.name}")
        if self.kind is not None and kind != self.kind:
            raise ValueError(f"this L2State holds the {self.kind} engine's L2; simulate every "
                             "launch that shares it with one engine")
        if self.cache is None:
            g = self.gpu
            self.kind = kind
            self.cache = (ArrayCache(1, g.l2_bytes, g.l2_assoc, g.line_bytes)
                          if kind == "compiled" else
                          SectorCache(g.l2_bytes, g.l2_assoc, g.line_bytes))
        return self.cache


def simulate_kernel(
    kernel: KernelTrace, gpu: GPUConfig | str, policy: str = "gto", *,
    l2: L2State | None = None, engine: str = "auto",
) -> KernelTiming:
    """Replay one kernel trace on ``gpu`` (caches start cold unless ``l2`` is given).

    Args:
        kernel: anything with ``.info`` and ``.warps()`` (a trace file, an in-memory kernel).
        gpu: a configuration or a name for :func:`gpu_by_name`.
        policy: warp scheduling, ``"gto"`` (greedy-then-oldest) or ``"lrr"`` (round robin).
        l2: L2 contents to start from; the kernel leaves its own in it for the next launch.
        engine: ``"auto"``, ``"compiled"`` (numba) or ``"reference"`` (plain Python); both
            give the same results.

    Raises:
        ValueError: unknown GPU name, policy or engine, or an ``l2`` made for another L2.
    """
    if policy not in ("gto", "lrr"):
        raise ValueError(f"unknown scheduling policy {policy!r}; choose 'gto' or 'lrr'")
    kind = engine_kind(engine)
    cfg = gpu_by_name(gpu)
    info = kernel.info
    occ = occupancy(info, cfg)
    start = time.perf_counter()
    cls = CompiledEngine if kind == "compiled" else ReferenceEngine
    eng = cls(cfg, occ.ctas_per_sm, _group_ctas(kernel.warps()), policy,
              shared_per_sm=occ.ctas_per_sm * info.shmem,
              l2=l2.check(cfg, kind) if l2 is not None else None)  # type: ignore[arg-type]
    simulated = math.ceil(eng.run())
    written_back = eng.write_back()
    elapsed = time.perf_counter() - start
    return _timing(info, cfg, occ, eng.c, simulated, elapsed, written_back)


def _timing(info: KernelInfo, gpu: GPUConfig, occ: Occupancy, c: dict[str, float],
            simulated: int, elapsed: float, written_back: int) -> KernelTiming:
    grid_ctas = math.prod(info.grid)
    ctas = int(c["ctas"])
    cycles = _extrapolate(info, simulated, ctas, occ.ctas_per_sm * gpu.num_sms)
    warp_insts = int(c["warp_insts"])
    return KernelTiming(
        kernel_id=info.kernel_id, name=info.name, gpu=gpu.name, cycles=cycles,
        simulated_cycles=simulated, time_us=cycles / gpu.clock_mhz,
        warp_instructions=warp_insts, thread_instructions=int(c["thread_insts"]),
        ipc=warp_insts / simulated if simulated else 0.0, ctas_simulated=ctas,
        grid_ctas=grid_ctas, occupancy=occ,
        waves=math.ceil(max(ctas, 1) / (occ.ctas_per_sm * gpu.num_sms)),
        l1_hit_rate=_rate(c["l1_hit"], c["l1_miss"]), l2_hit_rate=_rate(c["l2_hit"], c["l2_miss"]),
        dram_read_bytes=int(c["dram_read"]),
        dram_write_bytes=int(c["dram_write"]) + written_back,
        global_load_sectors=int(c["gld_sectors"]), global_store_sectors=int(c["gst_sectors"]),
        shared_wavefronts=int(c["shared_waves"]),
        shared_bank_conflicts=int(c["shared_waves"] - c["shared_ideal"]),
        model_seconds=elapsed,
    )


def _extrapolate(info: KernelInfo, simulated: int, ctas: int, concurrent: int) -> int:
    """Scale by waves when the trace holds only a sample of the grid's CTAs.

    The total comes from a ``-sampled ctas = kept/total`` header, else from the grid size.
    """
    total = math.prod(info.grid)
    sampled = info.extra.get(SAMPLED_CTAS_KEY, "")
    if "/" in sampled and sampled.split("/")[1].strip().isdigit():
        total = int(sampled.split("/")[1])
    if not ctas or ctas >= total:
        return simulated
    full_waves = math.ceil(total / concurrent)
    traced_waves = math.ceil(ctas / concurrent)
    return math.ceil(simulated * full_waves / traced_waves)


def _rate(hit: float, miss: float) -> float | None:
    return hit / (hit + miss) if hit + miss else None


def simulate_kernels(
    kernels: Iterable[KernelTrace], gpu: GPUConfig | str = "rtx2080ti", policy: str = "gto", *,
    warm_l2: bool = False, engine: str = "auto",
) -> list[KernelTiming]:
    """Simulate kernels in launch order; ``warm_l2`` keeps the L2 from one to the next."""
    cfg = gpu_by_name(gpu)
    l2 = L2State(cfg) if warm_l2 else None
    return [simulate_kernel(k, cfg, policy, l2=l2, engine=engine) for k in kernels]


def simulate_trace_dir(
    path: str | Path, gpu_name: GPUConfig | str = "rtx2080ti", policy: str = "gto", *,
    warm_l2: bool = False, engine: str = "auto",
) -> list[KernelTiming]:
    """Simulate every kernel of a trace folder (or one kernel file) in launch order.

    Args:
        path: an Accel-Sim trace folder (``kernelslist.g``) or one kernel file.
        gpu_name: a configuration or a name for :func:`gpu_by_name`.
        policy: ``"gto"`` or ``"lrr"``.
        warm_l2: keep the L2 contents across launches (default: every launch starts cold).
        engine: ``"auto"``, ``"compiled"`` or ``"reference"`` (see :func:`simulate_kernel`).

    Raises:
        ValueError: unknown GPU name (the message lists the choices).
        TraceFormatError: the folder or a file is not an Accel-Sim trace.
    """
    return simulate_kernels(iter_kernels(path), gpu_name, policy, warm_l2=warm_l2,
                            engine=engine)
