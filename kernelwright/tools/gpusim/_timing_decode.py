"""Decode trace instructions into the timing model's compact per-instruction tuples.

A decoded instruction is ``(cls, latency, unit, interval, srcs, dests, mem)``:

* ``unit`` - the per-scheduler execution unit it occupies for ``interval`` cycles;
* ``srcs``/``dests`` - registers the scoreboard tracks (zero registers dropped);
* ``mem`` - global-like classes: ``[(line, sector_mask), ...]``; shared: wavefronts (int);
  constant: distinct addresses (int); otherwise None.

Predicated-off instructions (active mask 0, e.g. ``@P0 EXIT`` or ``@!P1 BRA`` at a bounds
check) decode as a no-op of their unit: they take an issue slot and the unit's issue interval,
read their sources, write nothing, touch no memory, do not branch, wait at no barrier and end
no warp. A warp's stream is cut after the EXIT that retires the last of its lanes (the lanes
are every lane its mask ever names); EXITs of some lanes only, and instructions after them,
stay. Thread-instructions count the set bits of the masks of the instructions kept.

Decoding works per thread block so coalescing runs as one numpy batch.
"""

from __future__ import annotations

from typing import Any

from kernelwright.tools.gpusim._memsys import coalesce, shared_wavefronts
from kernelwright.tools.gpusim._opclass import OpClass, classify
from kernelwright.tools.gpusim.gpus import GPUConfig
from kernelwright.tools.gpusim.records import TraceInstruction, WarpStream

Decoded = tuple[int, int, int, int, tuple[str, ...], tuple[str, ...], Any]
ZERO_REGS = frozenset(("R255", "RZ", "URZ", "PT", "UPT"))
UNITS = ("int", "fp32", "fp64", "sfu", "tensor", "branch")
NUM_UNITS = len(UNITS)
_LINE_CLASSES = frozenset((OpClass.LD_GLOBAL, OpClass.ST_GLOBAL, OpClass.LD_LOCAL,
                           OpClass.ST_LOCAL, OpClass.ATOM_GLOBAL, OpClass.ASYNC_COPY))
_EXIT = int(OpClass.EXIT)
_BANK_CLASSES = frozenset((OpClass.LD_SHARED, OpClass.ST_SHARED, OpClass.ATOM_SHARED))


class Decoder:
    """Per-GPU opcode timing table plus a cache of decoded (opcode, registers) signatures."""

    def __init__(self, gpu: GPUConfig) -> None:
        g = gpu
        unit_of = {
            OpClass.INT: (0, g.alu_latency, g.issue_interval(g.int32_lanes_per_sm)),
            OpClass.FP32: (1, g.alu_latency, g.issue_interval(g.fp32_lanes_per_sm)),
            OpClass.FP64: (2, g.fp64_latency, g.issue_interval(g.fp64_lanes_per_sm)),
            OpClass.SFU: (3, g.sfu_latency, g.issue_interval(g.sfu_lanes_per_sm)),
            OpClass.TENSOR: (4, g.tensor_latency, g.tensor_interval),
            OpClass.BRANCH: (5, g.branch_latency, 1),
            OpClass.EXIT: (5, 1, 1),
            OpClass.BARRIER: (5, g.barrier_latency, 1),
            OpClass.ASYNC_WAIT: (5, 1, 1),
            OpClass.FENCE: (5, g.l2_latency // 2, 1),
            OpClass.NOP: (0, 1, 1),
        }
        self._table = {c: unit_of.get(c, (0, 1, 1)) for c in OpClass}
        self._cache: dict[tuple[str, tuple[str, ...], tuple[str, ...]], Decoded] = {}
        self._off: dict[tuple[str, tuple[str, ...]], Decoded] = {}

    def base(self, inst: TraceInstruction) -> Decoded:
        """Decode everything but the memory field (memoised on opcode and registers)."""
        key = (inst.opcode, inst.srcs, inst.dests)
        hit = self._cache.get(key)
        if hit is None:
            cls = classify(inst.opcode)
            unit, lat, interval = self._table[cls]
            srcs = tuple(r for r in inst.srcs if r not in ZERO_REGS)
            dests = tuple(r for r in inst.dests if r not in ZERO_REGS)
            hit = (int(cls), lat, unit, interval, srcs, dests, None)
            self._cache[key] = hit
        return hit

    def predicated_off(self, inst: TraceInstruction) -> Decoded:
        """Decode an instruction whose mask is 0: a no-op on its unit (memoised)."""
        key = (inst.opcode, inst.srcs)
        hit = self._off.get(key)
        if hit is None:
            _, _, unit, interval, srcs, _, _ = self.base(inst)
            hit = (int(OpClass.NOP), 1, unit, interval, srcs, (), None)
            self._off[key] = hit
        return hit

    def decode_warp(self, insts: tuple[TraceInstruction, ...]) -> tuple[list[Decoded], int]:
        """Decode one warp's stream (memory fields still None); returns it and its length.

        The length is where the stream ends: after the EXIT that retires its last lane.
        """
        get, base, off = self._cache.get, self.base, self.predicated_off
        decoded = [(get((i.opcode, i.srcs, i.dests)) or base(i)) if i.mask else off(i)
                   for i in insts]
        return decoded, _live_length(insts, decoded)

    def decode_cta(self, warps: list[WarpStream]) -> tuple[list[list[Decoded]], int]:
        """Decode all warps of one thread block (memory fields batched with numpy).

        Returns:
            Per warp its decoded instructions (cut at its last EXIT), and the block's
            thread-instruction count.
        """
        out: list[list[Decoded]] = []
        line_jobs: list[tuple[int, int]] = []
        bank_jobs: list[tuple[int, int]] = []
        const_jobs: list[tuple[int, int]] = []
        threads = 0
        for wi, stream in enumerate(warps):
            decoded, end = self.decode_warp(stream.instructions)
            if end < len(decoded):
                del decoded[end:]
                threads += sum(i.mask.bit_count() for i in stream.instructions[:end])
            else:
                threads += sum(i.mask.bit_count() for i in stream.instructions)
            for k, d in enumerate(decoded):
                cls = d[0]
                if cls in _LINE_CLASSES:
                    line_jobs.append((wi, k))
                elif cls in _BANK_CLASSES:
                    bank_jobs.append((wi, k))
                elif cls == OpClass.LD_CONST or cls == OpClass.SHUFFLE:
                    const_jobs.append((wi, k))
            out.append(decoded)
        self._fill(out, warps, line_jobs, coalesce)
        self._fill(out, warps, bank_jobs, _wavefronts_and_ideal)
        for wi, k in const_jobs:
            d = out[wi][k]
            out[wi][k] = (*d[:6], max(1, len(set(warps[wi].instructions[k].addresses))))
        return out, threads

    @staticmethod
    def _fill(out: list[list[Decoded]], warps: list[WarpStream], jobs: list[tuple[int, int]],
              batch_fn: Any) -> None:
        if not jobs:
            return
        insts = [warps[wi].instructions[k] for wi, k in jobs]
        results = batch_fn([i.addresses for i in insts], [i.mem_width for i in insts])
        for (wi, k), mem in zip(jobs, results, strict=True):
            d = out[wi][k]
            out[wi][k] = (*d[:6], mem)


def _live_length(insts: tuple[TraceInstruction, ...], decoded: list[Decoded]) -> int:
    """Index after the EXIT that retires the warp's last lane (else the stream's length)."""
    exits = [k for k, d in enumerate(decoded) if d[0] == _EXIT]
    if not exits or exits == [len(decoded) - 1]:
        return len(decoded)
    lanes = 0
    for i in insts:
        lanes |= i.mask
    retired = 0
    for k in exits:
        retired |= insts[k].mask
        if retired & lanes == lanes:
            return k + 1
    return len(decoded)


def _wavefronts_and_ideal(
    addr_lists: list[tuple[int, ...]], widths: list[int]
) -> list[tuple[int, int]]:
    """Per shared access: (wavefronts, conflict-free wavefronts = ceil(bytes / 128))."""
    waves = shared_wavefronts(addr_lists, widths)
    pairs = zip(addr_lists, widths, strict=True)
    ideal = [max(1, -(-len(a) * max(w, 4) // 128)) for a, w in pairs]
    return list(zip(waves, ideal, strict=True))
