"""Record what sampled warps execute as ``TraceInstruction`` streams for a ``TraceSink``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernelwright.tools.gpusim._simt import warp_bits
from kernelwright.tools.gpusim.records import TraceInstruction, TraceSink, WarpStream


@dataclass(frozen=True)
class TraceSampling:
    """Which CTAs and warps get traced, deterministically.

    Attributes:
        cta_every: trace CTAs whose linear id is a multiple of this (1 = every CTA).
        max_ctas: at most this many traced CTAs per launch (None = no limit).
        warps_per_cta: trace only the first N warps of a traced CTA (None = all).
    """

    cta_every: int = 1
    max_ctas: int | None = None
    warps_per_cta: int | None = None

    def traced_ctas(self, linear_ids: np.ndarray) -> np.ndarray:
        keep = linear_ids % max(self.cta_every, 1) == 0
        if self.max_ctas is not None:
            keep &= (linear_ids // max(self.cta_every, 1)) < self.max_ctas
        return keep


class WarpRecorder:
    """Collects per-warp instruction lists during one batch and flushes them to the sink."""

    def __init__(self, sink: TraceSink, traced: np.ndarray, ops, ctas: np.ndarray, wpc: int):
        self.sink, self.traced, self.ops, self.ctas, self.wpc = sink, traced, ops, ctas, wpc
        self._plain: dict[tuple[int, int], TraceInstruction] = {}
        self.streams: dict[int, list[TraceInstruction]] = {int(w): [] for w in
                                                           np.flatnonzero(traced)}  # fmt: skip

    def record(self, pc: int, cohort: np.ndarray, threads, addr) -> None:
        """One step: warps ``cohort`` executed instruction ``pc`` on lanes ``threads``."""
        mine = self.traced[cohort]
        if not mine.any():
            return
        warps = cohort[mine]
        op = self.ops[pc]
        bits = warp_bits(threads, self.traced.size)[warps].tolist()
        if not (op.width and addr is not None):
            for w, m in zip(warps.tolist(), bits, strict=True):
                inst = self._plain.get((pc, m))
                if inst is None:
                    inst = TraceInstruction(16 * pc, m, op.ins.opcode, op.dests, op.srcs)
                    self._plain[(pc, m)] = inst
                self.streams[w].append(inst)
            return
        t = np.arange(self.traced.size * 32) if threads is None else threads
        starts = np.searchsorted(t, warps * 32).tolist()
        ends = np.searchsorted(t, warps * 32 + 32).tolist()
        lanes = addr.tolist()
        for k, w in enumerate(warps.tolist()):
            self.streams[w].append(
                TraceInstruction(
                    16 * pc,
                    bits[k],
                    op.ins.opcode,
                    op.dests,
                    op.srcs,
                    op.width,
                    tuple(lanes[starts[k] : ends[k]]),
                )  # fmt: skip
            )

    def flush(self) -> None:
        for w, insts in self.streams.items():
            cta = tuple(int(x) for x in self.ctas[w // self.wpc])
            self.sink.warp(WarpStream(cta, w % self.wpc, tuple(insts)))
        self.streams = {}
