"""What samplers may see of a workload: per-invocation headers, profiles and graphs - no cycles.

:func:`scan_trace_dir` streams an Accel-Sim trace folder once and returns a
:class:`WorkloadTraces`: for each kernel invocation, in launch order, its header, a
:class:`KernelProfile` of cheap counts taken from the trace (the signals PKA, Sieve, Photon and
STEM read), a content digest of its trace, and its :class:`~.hrg.TraceGraph` (graphs are shared
between identical invocations). Nothing here runs the timing model; the cycles that samplers are
scored against live in :mod:`.groundtruth`, which samplers never receive.

Counts in a trace that holds a sample of the grid's CTAs (``-sampled ctas = kept/total``) or of
each CTA's warps are extrapolated by ``scale = total warps / traced warps``.

The scan is cached as a pickle under ``<cache_dir>/sampler-scan/``, keyed by the folder's path,
file sizes and modification times, the scan version and the graph options.
"""

from __future__ import annotations

import hashlib
import logging
import lzma
import math
import pickle
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kernelwright.config import Settings
from kernelwright.errors import SamplerError
from kernelwright.tools.gpusim.records import KernelInfo, WarpStream
from kernelwright.tools.gpusim.traces import iter_kernels
from kernelwright.tools.sampler._opfamily import FAMILY, LATENCY, NUM_FAMILIES, family
from kernelwright.tools.sampler.hrg import GraphOptions, TraceGraph, build_graph

log = logging.getLogger(__name__)
SCAN_VERSION = 4
SECTOR = 32
_LATENCY = np.array(LATENCY)
_SAMPLED_KEY = "sampled ctas"


@dataclass(frozen=True)
class KernelProfile:
    """Cheap per-invocation counts from the trace, extrapolated to the whole grid.

    Attributes:
        family_counts: warp instructions per opcode family (see ``_opfamily.FAMILIES``).
        warp_instructions, thread_instructions: totals (thread = set mask bits).
        global_load_sectors, global_store_sectors, local_load_sectors: distinct 32-byte sectors
            touched per instruction, summed.
        bbv: basic-block-style vector, executions per PC (extrapolated).
        grid_ctas, threads_per_cta: launch geometry.
        scale: the extrapolation factor applied (1.0 for a complete trace).
        warp_path: the longest traced warp, each instruction weighted by a nominal latency of
            its family (:data:`_opfamily.NOMINAL_LATENCY`): a critical-path estimate in cycles.
    """

    family_counts: tuple[float, ...]
    warp_instructions: float
    thread_instructions: float
    global_load_sectors: float
    global_store_sectors: float
    local_load_sectors: float
    bbv: dict[int, float]
    grid_ctas: int
    threads_per_cta: int
    scale: float
    warp_path: float = 0.0

    def count(self, name: str) -> float:
        """Warp instructions of opcode family ``name``."""
        return self.family_counts[FAMILY[name]]

    @property
    def total_warps(self) -> int:
        return self.grid_ctas * max(1, math.ceil(self.threads_per_cta / 32))

    @property
    def cost_proxy(self) -> float:
        """A cheap work estimate: warp instructions + 4 x memory sectors (no timing model)."""
        sectors = self.global_load_sectors + self.global_store_sectors + self.local_load_sectors
        return self.warp_instructions + 4.0 * sectors

    @property
    def time_proxy(self) -> float:
        """A cheap duration estimate (no timing model), used to bound errors and by STEM.

        ``waves x warp_path + cost_proxy / 272``: the latency-bound path of one warp times
        the CTA waves of a nominal 68-SM GPU holding 8 CTAs per SM, plus the work spread over
        272 schedulers (68 SMs x 4). Small kernels (LLM decode) are latency bound, big ones
        throughput bound; the sum follows both without knowing the GPU.
        """
        waves = math.ceil(self.grid_ctas / (68 * 8))
        return waves * self.warp_path + self.cost_proxy / 272


@dataclass(frozen=True)
class Invocation:
    """One kernel launch as samplers see it (launch order ``index`` from 0)."""

    index: int
    kernel_id: int
    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    profile: KernelProfile
    trace_digest: str  # equal digests: identical traces (same instructions and addresses)
    file: str = ""  # kernel file name in the folder, e.g. kernel-3.traceg.xz


@dataclass
class WorkloadTraces:
    """A workload as samplers see it: invocations, shared graphs, and nothing timed.

    Attributes:
        name: workload name (folder name by default).
        invocations: launch order.
        graphs: unique graphs; ``graph_of[i]`` indexes the graph of invocation ``i``.
    """

    name: str
    invocations: list[Invocation]
    graphs: list[TraceGraph] = field(default_factory=list)
    graph_of: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.invocations)

    def __repr__(self) -> str:
        return (f"WorkloadTraces({self.name!r}, invocations={len(self)}, "
                f"graphs={len(self.graphs)})")  # fmt: skip

    def cost_proxy(self) -> np.ndarray:
        """Per-invocation :attr:`KernelProfile.cost_proxy` (work)."""
        return np.array([i.profile.cost_proxy for i in self.invocations])

    def time_proxy(self) -> np.ndarray:
        """Per-invocation :attr:`KernelProfile.time_proxy` (cheap duration estimate)."""
        return np.array([i.profile.time_proxy for i in self.invocations])


def profile_kernel(info: KernelInfo, warps: list[WarpStream]) -> KernelProfile:
    """Counts over ``warps`` (a kernel's traced warps), extrapolated to the full grid."""
    fam = np.zeros(NUM_FAMILIES)
    thread = gld = gst = lld = 0.0
    bbv: dict[int, float] = {}
    g_ld, g_st, l_ld = FAMILY["ld_global"], FAMILY["st_global"], FAMILY["ld_local"]
    path = 0.0
    for w in warps:
        length = 0.0
        for inst in w.instructions:
            f = family(inst.opcode)
            fam[f] += 1
            length += _LATENCY[f]
            thread += bin(inst.mask).count("1")
            bbv[inst.pc] = bbv.get(inst.pc, 0.0) + 1
            if inst.addresses and f in (g_ld, g_st, l_ld):
                n = len({a // SECTOR for a in inst.addresses})
                if f == g_ld:
                    gld += n
                elif f == g_st:
                    gst += n
                else:
                    lld += n
        path = max(path, length)
    ctas, threads = math.prod(info.grid), math.prod(info.block)
    total = _total_ctas(info) * max(1, math.ceil(threads / 32))
    s = total / max(len(warps), 1)
    return KernelProfile(tuple(float(x) for x in fam * s), float(fam.sum() * s), thread * s,
                         gld * s, gst * s, lld * s, {pc: c * s for pc, c in bbv.items()}, ctas,
                         threads, s, path)  # fmt: skip


def _total_ctas(info: KernelInfo) -> int:
    sampled = info.extra.get(_SAMPLED_KEY, "")
    if "/" in sampled and sampled.split("/")[1].strip().isdigit():
        return int(sampled.split("/")[1])
    return math.prod(info.grid)


def trace_digest(info: KernelInfo, warps: list[WarpStream]) -> str:
    """Digest of the header fields the timing model reads and every traced instruction.

    Instructions enter through Python's hash of integer tuples (PC, mask, width, addresses),
    which is stable across processes (only ``str`` hashing is salted); opcodes are implied by
    the PC within one kernel name.
    """
    h = hashlib.sha1(repr((info.name, info.grid, info.block, info.shmem, info.nregs,
                           info.extra.get(_SAMPLED_KEY))).encode())  # fmt: skip
    for w in warps:
        body = hash(tuple((i.pc, i.mask, i.mem_width, i.addresses) for i in w.instructions))
        h.update(repr((w.cta, w.warp_id, len(w.instructions), body)).encode())
    return h.hexdigest()


def scan_trace_dir(path: str | Path, *, name: str | None = None,
                   options: GraphOptions | None = None,
                   settings: Settings | None = None,
                   cache: bool = True) -> WorkloadTraces:  # fmt: skip
    """Read a trace folder once: profiles, digests and graphs of every invocation.

    Raises:
        SamplerError: the folder does not exist.
        TraceFormatError: the folder is not an Accel-Sim trace folder.
    """
    root, opts = Path(path), options or GraphOptions()
    if not root.exists():
        raise SamplerError(f"trace folder {root} does not exist. Fix: pass the folder that holds "
                           "kernelslist.g and the kernel-N.traceg files.")  # fmt: skip
    cache_file = _cache_file(root, opts, settings) if cache else None
    if cache_file is not None and cache_file.is_file():
        with open(cache_file, "rb") as fh:
            traces: WorkloadTraces = pickle.load(fh)
        traces.name = name or traces.name
        return traces
    traces = WorkloadTraces(name or root.name, [])
    by_digest: dict[str, int] = {}
    by_body: dict[str, tuple[KernelProfile, str, int]] = {}
    for index, kernel in enumerate(iter_kernels(root)):
        info, body = kernel.info, kernel_body_digest(kernel.path)
        if body not in by_body:
            warps = list(kernel.warps())
            graph = build_graph(info, warps, opts)
            if graph.digest not in by_digest:
                by_digest[graph.digest] = len(traces.graphs)
                traces.graphs.append(graph)
            by_body[body] = (profile_kernel(info, warps), trace_digest(info, warps),
                             by_digest[graph.digest])  # fmt: skip
        profile, digest, graph_index = by_body[body]
        traces.graph_of.append(graph_index)
        traces.invocations.append(Invocation(index, info.kernel_id, info.name, info.grid,
                                             info.block, profile, digest, kernel.path.name))
    if cache_file is not None:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_suffix(".tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(traces, fh)
        tmp.replace(cache_file)
    return traces


def kernel_body_digest(path: Path) -> str:
    """SHA-1 of a kernel file's text without its ``-kernel id`` line.

    Two files with equal body digests parse to the same trace, so a scan (or the ground truth)
    reads the second for free. Decompression is C speed; parsing is what it saves.
    """
    raw = lzma.open(path).read() if path.suffix == ".xz" else path.read_bytes()
    text = raw.decode("utf-8", errors="replace")
    start = text.find("-kernel id")
    if start >= 0:
        text = text[:start] + text[text.find("\n", start) + 1 :]
    return hashlib.sha1(text.encode()).hexdigest()


def folder_fingerprint(root: Path) -> str:
    """Digest of a folder's path and its files' names, sizes and modification times."""
    h = hashlib.sha1(str(root.resolve()).encode())
    for p in sorted(root.iterdir()) if root.is_dir() else [root]:
        st = p.stat()
        h.update(f"{p.name}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()


def _cache_file(root: Path, opts: GraphOptions, settings: Settings | None) -> Path:
    settings = settings or Settings()
    key = hashlib.sha1(f"{SCAN_VERSION}:{folder_fingerprint(root)}:{opts}".encode()).hexdigest()
    return Path(settings.cache_dir) / "sampler-scan" / f"{root.name}-{key[:16]}.pkl"
