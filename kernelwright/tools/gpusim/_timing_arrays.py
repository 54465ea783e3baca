"""Decode a kernel trace into flat arrays for the compiled timing engine.

The same rules as :class:`._timing_decode.Decoder` (which feeds the reference engine), laid out
for numba instead of as Python tuples:

* a signature table - one row per distinct ``(opcode, sources, destinations)`` (and one per
  predicated-off ``(opcode, sources)``): class, latency, unit, issue interval, register ids
  (``-1`` padded);
* per kept warp-instruction: its signature id and two memory fields ``ma``/``mb`` - for
  global-like classes the range ``lines[ma:mb]`` of its coalesced ``(line, sector mask)``
  accesses; for shared memory (wavefronts, conflict-free wavefronts); for constant loads and
  shuffles the number of distinct addresses;
* per warp with instructions: its range of instructions; per thread block (empty ones too, so
  the block count matches): its first warp and warp count.

Thread blocks are decoded ``_BATCH`` at a time so coalescing runs as one numpy call; memory is
about 16 bytes per warp-instruction plus 16 per coalesced line (the trace text is not kept).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, islice
from operator import attrgetter, itemgetter

import numpy as np

from kernelwright.tools.gpusim._memsys import coalesce_flat
from kernelwright.tools.gpusim._opclass import OpClass
from kernelwright.tools.gpusim._timing_decode import Decoder
from kernelwright.tools.gpusim.gpus import GPUConfig
from kernelwright.tools.gpusim.records import TraceInstruction, WarpStream

_BATCH = 128
_MASK, _ADDRS, _WIDTH = attrgetter("mask"), attrgetter("addresses"), attrgetter("mem_width")
_KEY = attrgetter("opcode", "srcs", "dests")
_EXIT = int(OpClass.EXIT)
_LINE, _BANK, _COUNT = (np.zeros(len(OpClass), bool) for _ in range(3))  # class -> is it
_LINE[[OpClass.LD_GLOBAL, OpClass.ST_GLOBAL, OpClass.LD_LOCAL, OpClass.ST_LOCAL,
       OpClass.ATOM_GLOBAL, OpClass.ASYNC_COPY]] = True
_BANK[[OpClass.LD_SHARED, OpClass.ST_SHARED, OpClass.ATOM_SHARED]] = True
_COUNT[[OpClass.LD_CONST, OpClass.SHUFFLE]] = True


@dataclass
class KernelArrays:
    """One kernel, decoded (see the module docstring)."""

    s_cls: np.ndarray
    s_lat: np.ndarray
    s_unit: np.ndarray
    s_interval: np.ndarray
    s_src: np.ndarray  # (signatures, max sources), -1 padded
    s_dst: np.ndarray
    sig: np.ndarray
    ma: np.ndarray
    mb: np.ndarray
    lines: np.ndarray
    masks: np.ndarray
    w_start: np.ndarray
    w_end: np.ndarray
    c_w0: np.ndarray
    c_nw: np.ndarray
    n_regs: int
    thread_insts: int

    @property
    def max_warps_per_cta(self) -> int:
        return int(self.c_nw.max(initial=0))


class _Table(dict):
    """Signature key -> id, creating rows on first sight."""

    def __init__(self, make) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, key):
        value = self[key] = self.make(key)
        return value


@lru_cache(maxsize=16)
def decoder_for(gpu: GPUConfig) -> ArrayDecoder:
    """One decoder per GPU configuration, shared by its kernels (the signature table and the
    register numbering only grow; results do not depend on what was decoded before)."""
    return ArrayDecoder(gpu)


class ArrayDecoder:
    """Turns thread blocks of ``WarpStream`` into :class:`KernelArrays`, kernel by kernel."""

    def __init__(self, gpu: GPUConfig) -> None:
        self.decoder = Decoder(gpu)
        self.regs: _Table = _Table(lambda name: len(self.regs))
        self.rows: list[tuple[int, int, int, int, tuple[int, ...], tuple[int, ...]]] = []
        self.on = _Table(self._new_on)
        self.off = _Table(self._new_off)
        self._arrays: tuple[np.ndarray, ...] = ()

    def tables(self) -> tuple[np.ndarray, ...]:
        """The signature table as arrays: cls, lat, unit, interval, src ids, dest ids."""
        rows = self.rows or [(0, 1, 0, 1, (), ())]
        if self._arrays and len(self._arrays[0]) == len(rows):
            return self._arrays
        ks = max(1, max(len(r[4]) for r in rows))
        kd = max(1, max(len(r[5]) for r in rows))
        s_src = np.full((len(rows), ks), -1, np.int64)
        s_dst = np.full((len(rows), kd), -1, np.int64)
        for k, r in enumerate(rows):
            s_src[k, :len(r[4])] = r[4]
            s_dst[k, :len(r[5])] = r[5]
        cols = [np.array([r[j] for r in rows], np.int64) for j in range(4)]
        self._arrays = (*cols, s_src, s_dst)
        return self._arrays

    def _row(self, decoded: tuple) -> int:
        cls, lat, unit, interval, srcs, dests, _ = decoded
        regs = self.regs
        self.rows.append((cls, lat, unit, interval, tuple(regs[r] for r in srcs),
                          tuple(regs[r] for r in dests)))
        return len(self.rows) - 1

    def _new_on(self, key: tuple[str, tuple[str, ...], tuple[str, ...]]) -> int:
        opcode, srcs, dests = key
        return self._row(self.decoder.base(TraceInstruction(0, 1, opcode, dests, srcs)))

    def _new_off(self, key: tuple[str, tuple[str, ...]]) -> int:
        opcode, srcs = key
        return self._row(self.decoder.predicated_off(TraceInstruction(0, 0, opcode, (), srcs)))

    def decode(self, ctas: Iterator[list[WarpStream]]) -> KernelArrays:
        """Decode every thread block of a kernel."""
        parts: list[tuple[np.ndarray, ...]] = []
        c_nw: list[int] = []
        lines: list[np.ndarray] = []
        n_lines = threads = 0
        while batch := list(islice(ctas, _BATCH)):
            sig, ma, mb, warp_len, ln, ms, t = self._batch(batch, n_lines)
            threads += t
            lines.append(np.stack([ln, ms]))
            n_lines += len(ln)
            parts.append((sig, ma, mb, warp_len))
            sizes = np.fromiter(map(len, batch), np.int64, len(batch))
            c_nw.extend(np.add.reduceat(warp_len > 0, np.cumsum(sizes) - sizes).tolist()
                        if len(warp_len) else [0] * len(batch))
        return self._assemble(parts, lines, c_nw, threads)

    def _batch(self, batch: list[list[WarpStream]], line_base: int):
        on, off = self.on, self.off
        insts = [w.instructions for cta in batch for w in cta]
        lengths = np.fromiter(map(len, insts), np.int64, len(insts))
        flat = list(chain.from_iterable(insts))
        n = len(flat)
        masks = np.fromiter(map(_MASK, flat), np.int64, n)
        sig = np.fromiter(map(on.__getitem__, map(_KEY, flat)), np.int64, n)
        for k in np.flatnonzero(masks == 0).tolist():  # predicated off: a no-op row
            sig[k] = off[(flat[k].opcode, flat[k].srcs)]
        cls = self.tables()[0][sig]
        keep = _kept(cls, masks, lengths)
        threads = int(popcount(masks[keep]).sum())
        ma = np.zeros(len(flat), np.int64)
        mb = np.zeros(len(flat), np.int64)
        jobs = np.flatnonzero(keep & _LINE[cls])
        picked = _pick(flat, jobs)
        ln, ms, bounds = coalesce_flat(list(map(_ADDRS, picked)), list(map(_WIDTH, picked)))
        ma[jobs], mb[jobs] = line_base + bounds[:-1], line_base + bounds[1:]
        jobs = np.flatnonzero(keep & _BANK[cls])
        if len(jobs):
            picked = _pick(flat, jobs)
            addrs, widths = list(map(_ADDRS, picked)), list(map(_WIDTH, picked))
            lanes = np.fromiter(map(len, addrs), np.int64, len(addrs))
            ma[jobs] = _wavefronts(addrs, lanes, widths)
            nbytes = lanes * np.maximum(np.asarray(widths, np.int64), 4)
            mb[jobs] = np.maximum(1, -(-nbytes // 128))  # conflict-free wavefronts
        jobs = np.flatnonzero(keep & _COUNT[cls])
        ma[jobs] = [max(1, len(set(flat[k].addresses))) for k in jobs]
        warp_of = np.repeat(np.arange(len(insts)), lengths)
        kept_len = np.bincount(warp_of[keep], minlength=len(insts))
        return sig[keep], ma[keep], mb[keep], kept_len, ln, ms, threads

    def _assemble(self, parts, lines, c_nw, threads) -> KernelArrays:
        s_cls, s_lat, s_unit, s_interval, s_src, s_dst = self.tables()

        def cat(i: int) -> np.ndarray:
            return np.concatenate([p[i] for p in parts]) if parts else np.zeros(0, np.int64)

        warp_len = cat(3)
        busy = warp_len[warp_len > 0]
        ends = np.cumsum(busy)
        nw = np.asarray(c_nw, np.int64)
        ln = np.concatenate(lines, axis=1) if lines else np.zeros((2, 0), np.int64)
        return KernelArrays(
            s_cls=s_cls, s_lat=s_lat, s_unit=s_unit, s_interval=s_interval, s_src=s_src,
            s_dst=s_dst, sig=cat(0), ma=cat(1), mb=cat(2),
            lines=np.ascontiguousarray(ln[0]), masks=np.ascontiguousarray(ln[1]),
            w_start=ends - busy, w_end=ends,
            c_w0=np.cumsum(nw) - nw, c_nw=nw, n_regs=max(1, len(self.regs)),
            thread_insts=threads,
        )


def _wavefronts(addrs: list[tuple[int, ...]], lanes: np.ndarray, widths: list[int]
                ) -> np.ndarray:
    """Shared-memory wavefronts, compiled (same rule as :func:`._memsys.shared_wavefronts`)."""
    from kernelwright.tools.gpusim._timing_kernels import shared_wavefronts_flat

    flat = np.fromiter(chain.from_iterable(addrs), np.int64, int(lanes.sum()))
    return shared_wavefronts_flat(flat, lanes, np.asarray(widths, np.int64))


def _pick(items: list, idx: np.ndarray) -> list:
    """``[items[k] for k in idx]`` at C speed."""
    if len(idx) == 0:
        return []
    if len(idx) == 1:
        return [items[int(idx[0])]]
    return list(itemgetter(*idx.tolist())(items))


def popcount(a: np.ndarray) -> np.ndarray:
    """Set bits per element of a non-negative int64 array (``np.bitwise_count`` on numpy 2)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(a)
    a = a.astype(np.uint64)
    out = np.zeros(a.shape, np.int64)
    while a.any():
        out += (a & np.uint64(1)).astype(np.int64)
        a = a >> np.uint64(1)
    return out


def _kept(cls: np.ndarray, masks: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Which instructions stay: a warp's stream is cut after the EXIT retiring its last lane.

    Only warps with an EXIT before their last instruction need the lane-by-lane walk.
    """
    keep = np.ones(len(cls), bool)
    ends = np.cumsum(lengths)
    exits = np.flatnonzero(cls == _EXIT)
    early = exits[~np.isin(exits, ends - 1)]
    for w in np.unique(np.searchsorted(ends, early, "right")):
        start = int(ends[w] - lengths[w])
        m = masks[start:ends[w]].tolist()
        lanes = 0
        for x in m:
            lanes |= x
        retired = 0
        for k in np.flatnonzero(cls[start:ends[w]] == _EXIT).tolist():
            retired |= m[k]
            if retired & lanes == lanes:
                keep[start + k + 1:ends[w]] = False
                break
    return keep
