"""Record what sampled warps execute as ``TraceInstruction`` streams for a ``TraceSink``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
        self.streams: dict[int, list[TraceInstruction]] = {int(w): [] for w in
                                                           np.flatnonzero(traced)}  # fmt: skip

    def record(self, pc: int, cohort: np.ndarray, threads, bits: np.ndarray, addr) -> None:
        """One step: warps ``cohort`` executed instruction ``pc``; ``bits`` their exec masks."""
        mine = self.traced[cohort]
        if not mine.any():
            return
        op = self.ops[pc]
        base = (op.ins.opcode, op.dests, op.srcs)
        with_mem = op.width and addr is not None
        if with_mem:
            t = np.arange(self.traced.size * 32) if threads is None else threads
            starts = np.searchsorted(t, cohort[mine] * 32)
            ends = np.searchsorted(t, cohort[mine] * 32 + 32)
        bm = bits[mine].tolist()
        for k, w in enumerate(cohort[mine].tolist()):
            addrs = tuple(addr[starts[k] : ends[k]].tolist()) if with_mem else ()
            self.streams[w].append(
                TraceInstruction(
                    16 * pc, bm[k], base[0], base[1], base[2], op.width if with_mem else 0, addrs
                )  # fmt: skip
            )

    def flush(self) -> None:
        for w, insts in self.streams.items():
            cta = tuple(int(x) for x in self.ctas[w // self.wpc])
            self.sink.warp(WarpStream(cta, w % self.wpc, tuple(insts)))
        self.streams = {}
