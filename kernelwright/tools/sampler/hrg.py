"""Heterogeneous relational graph (HRG) of one kernel invocation, built from its trace.

Nodes (one feature row each, ``[node type | opcode family | 8 scalars]``):

* instruction nodes, one per static PC executed by the sampled warps (opcode family one-hot;
  scalars: log executions per warp, active-lane fraction, predicated-off fraction, bytes per lane,
  destinations, sources, 32-byte sectors per access, distinct 128-byte lines per access);
* warp nodes (instructions executed, mean active lanes), CTA nodes (sampled warps), and one kernel
  node (grid CTAs, threads per CTA, shared memory, registers, warps per CTA, the longest sampled
  warp's latency-weighted length, and the sampled instructions extrapolated to the grid, all
  log-scaled). Augmentations never touch the kernel node.

Relations (``edge_type``), each edge stored once per (src, dst, relation):

====  ==========================================================================
 0    next instruction in a warp's stream (pc_i -> pc_i+1)
 1    register RAW dependence (last writer of a register -> its next reader)
 2    control flow (a branch, or any non-sequential step, -> the PC executed next)
 3    same memory line (last instruction touching a 128-byte line -> the next one)
 4/5  warp -> instruction it executed / instruction -> warp
 6/7  CTA -> warp / warp -> CTA
 8/9  kernel -> CTA / CTA -> kernel
====  ==========================================================================

Size is bounded by deterministic sampling: the first ``max_ctas`` CTAs in trace order, their
first ``max_warps_per_cta`` warps, at most ``max_insts_per_warp`` instructions each. Identical
invocations give identical graphs (same bytes, same :attr:`TraceGraph.digest`), so they are
embedded once and shared.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kernelwright.tools.gpusim.records import KernelInfo, WarpStream
from kernelwright.tools.sampler._opfamily import (
    FAMILY,
    LATENCY,
    NUM_FAMILIES,
    family,
    is_memory,
)

NODE_TYPES = ("instruction", "warp", "cta", "kernel")
NUM_SCALARS = 8
NUM_FEATURES = len(NODE_TYPES) + NUM_FAMILIES + NUM_SCALARS
NUM_RELATIONS = 10
R_NEXT, R_RAW, R_CTRL, R_MEM = 0, 1, 2, 3
R_WARP_INST, R_INST_WARP, R_CTA_WARP, R_WARP_CTA, R_KERNEL_CTA, R_CTA_KERNEL = range(4, 10)
LINE, SECTOR = 128, 32
_BRANCH = FAMILY["branch"]


@dataclass(frozen=True)
class GraphOptions:
    """Deterministic bounds on the graph of one invocation."""

    max_ctas: int = 4
    max_warps_per_cta: int = 2
    max_insts_per_warp: int = 4096


@dataclass(frozen=True, eq=False)
class TraceGraph:
    """One invocation's HRG as plain arrays (``x``: float32 [N, F]; ``edge_index``: int64
    [2, E]; ``edge_type``: int64 [E]; ``node_type``: int64 [N])."""

    x: np.ndarray
    edge_index: np.ndarray
    edge_type: np.ndarray
    node_type: np.ndarray

    @property
    def num_nodes(self) -> int:
        return int(self.x.shape[0])

    @property
    def digest(self) -> str:
        """SHA-1 over every array: equal digests mean identical graphs."""
        h = hashlib.sha1()
        for a in (self.x, self.edge_index, self.edge_type, self.node_type):
            h.update(np.ascontiguousarray(a).tobytes())
        return h.hexdigest()


class _Builder:
    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.types: list[int] = []
        self.edges: set[tuple[int, int, int]] = set()

    def node(self, kind: int, fam: int | None, scalars: Sequence[float]) -> int:
        row = np.zeros(NUM_FEATURES, np.float32)
        row[kind] = 1.0
        if fam is not None:
            row[len(NODE_TYPES) + fam] = 1.0
        row[len(NODE_TYPES) + NUM_FAMILIES :][: len(scalars)] = scalars
        self.rows.append(row)
        self.types.append(kind)
        return len(self.rows) - 1

    def edge(self, src: int, dst: int, rel: int) -> None:
        self.edges.add((src, dst, rel))


class _PcStats:
    __slots__ = ("fam", "count", "lanes", "off", "width", "dests", "srcs", "sectors", "lines")

    def __init__(self, fam: int, width: int, dests: int, srcs: int) -> None:
        self.fam, self.width, self.dests, self.srcs = fam, width, dests, srcs
        self.count = self.lanes = self.off = self.sectors = self.lines = 0


def build_graph(info: KernelInfo, warps: Sequence[WarpStream],
                options: GraphOptions | None = None) -> TraceGraph:  # fmt: skip
    """The HRG of one invocation from its header and (some of) its warps."""
    opts = options or GraphOptions()
    chosen = _sample_warps(warps, opts)
    pcs: dict[int, _PcStats] = {}
    b = _Builder()
    kernel = b.node(3, None, _kernel_scalars(info, warps))
    inst_node: dict[int, int] = {}
    pending: list[tuple[int, int, int]] = []  # (src pc, dst pc, relation)
    warp_nodes: list[tuple[int, int, list[int]]] = []  # (cta slot, warp node, pcs)
    cta_slots: dict[tuple[int, int, int], int] = {}
    for w in chosen:
        insts = w.instructions[: opts.max_insts_per_warp]
        seen = _walk_warp(insts, pcs, pending)
        active = sum(bin(i.mask).count("1") for i in insts) / (32 * max(len(insts), 1))
        slot = cta_slots.setdefault(w.cta, len(cta_slots))
        warp_nodes.append((slot, b.node(1, None, [math.log1p(len(insts)) / 10, active]), seen))
    n_warps = max(len(chosen), 1)
    for pc in sorted(pcs):
        inst_node[pc] = b.node(0, pcs[pc].fam, _inst_scalars(pcs[pc], n_warps))
    for src, dst, rel in set(pending):
        b.edge(inst_node[src], inst_node[dst], rel)
    cta_nodes = {}
    for slot in sorted(set(s for s, _, _ in warp_nodes)):
        n = sum(1 for s, _, _ in warp_nodes if s == slot)
        cta_nodes[slot] = b.node(2, None, [math.log1p(n)])
        b.edge(kernel, cta_nodes[slot], R_KERNEL_CTA)
        b.edge(cta_nodes[slot], kernel, R_CTA_KERNEL)
    for slot, wn, seen in warp_nodes:
        b.edge(cta_nodes[slot], wn, R_CTA_WARP)
        b.edge(wn, cta_nodes[slot], R_WARP_CTA)
        for pc in seen:
            b.edge(wn, inst_node[pc], R_WARP_INST)
            b.edge(inst_node[pc], wn, R_INST_WARP)
    return _finish(b)


def _sample_warps(warps: Sequence[WarpStream], opts: GraphOptions) -> list[WarpStream]:
    """The first ``max_ctas`` CTAs in trace order and their lowest-numbered warps."""
    by_cta: dict[tuple[int, int, int], list[WarpStream]] = {}
    for w in warps:
        if w.cta not in by_cta and len(by_cta) >= opts.max_ctas:
            continue
        by_cta.setdefault(w.cta, []).append(w)
    out: list[WarpStream] = []
    for group in by_cta.values():
        out += sorted(group, key=lambda s: s.warp_id)[: opts.max_warps_per_cta]
    return out


def _walk_warp(insts, pcs: dict[int, _PcStats], pending: list) -> list[int]:
    """Update per-PC statistics and collect PC-level edges of one warp's stream."""
    writer: dict[str, int] = {}
    line_owner: dict[int, int] = {}
    seen: dict[int, None] = {}
    prev: int | None = None
    prev_branch = False
    for inst in insts:
        pc = inst.pc
        st = pcs.get(pc)
        if st is None:
            st = pcs[pc] = _PcStats(family(inst.opcode), inst.mem_width, len(inst.dests),
                                    len(inst.srcs))  # fmt: skip
        st.count += 1
        lanes = bin(inst.mask).count("1")
        st.lanes += lanes
        st.off += lanes == 0
        seen[pc] = None
        if prev is not None:
            pending.append((prev, pc, R_NEXT))
            if prev_branch or pc != prev + 16:
                pending.append((prev, pc, R_CTRL))
        for r in inst.srcs:
            if r in writer:
                pending.append((writer[r], pc, R_RAW))
        for r in inst.dests:
            writer[r] = pc
        if inst.addresses and is_memory(st.fam):
            lines = {a // LINE for a in inst.addresses}
            st.sectors += len({a // SECTOR for a in inst.addresses})
            st.lines += len(lines)
            for line in lines:
                owner = line_owner.get(line)
                if owner is not None:
                    pending.append((owner, pc, R_MEM))
                line_owner[line] = pc
        prev, prev_branch = pc, st.fam == _BRANCH
    return list(seen)


def _inst_scalars(st: _PcStats, n_warps: int) -> list[float]:
    n = max(st.count, 1)
    return [math.log1p(st.count / n_warps) / 5, st.lanes / (32 * n), st.off / n, st.width / 16,
            st.dests, st.srcs / 4, st.sectors / (32 * n), st.lines / (32 * n)]  # fmt: skip


def _kernel_scalars(info: KernelInfo, warps: Sequence[WarpStream]) -> list[float]:
    ctas = math.prod(info.grid)
    threads = math.prod(info.block)
    nregs = info.nregs if 0 < info.nregs <= 255 else 32
    path = max((sum(LATENCY[family(i.opcode)] for i in w.instructions) for w in warps), default=0)
    insts = sum(len(w.instructions) for w in warps)
    total = insts * ctas * math.ceil(threads / 32) / max(len(warps), 1)
    return [math.log2(ctas + 1) / 16, math.log2(threads + 1) / 10, info.shmem / 49152,
            nregs / 255, math.log2(math.ceil(threads / 32) + 1) / 5, math.log2(path + 1) / 20,
            math.log2(total + 1) / 30]  # fmt: skip


def _finish(b: _Builder) -> TraceGraph:
    edges = sorted(b.edges)
    ei = np.array([[s for s, _, _ in edges], [d for _, d, _ in edges]], np.int64).reshape(2, -1)
    et = np.array([r for _, _, r in edges], np.int64)
    return TraceGraph(np.stack(b.rows), ei, et, np.array(b.types, np.int64))
