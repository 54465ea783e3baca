"""Hand-built warp-instruction streams for timing-model tests and benchmarks (SASS-style names).

Example:
    >>> body = [ld_global(0x10, "R4", 0x1000, 4), alu(0x20, "R5", ("R4",)), exit_(0x30)]
    >>> k = synthetic_kernel(ctas=2, warps_per_cta=4, body=lambda cta, w: body)
    >>> sum(len(w.instructions) for w in k.warps())
    24
"""

from __future__ import annotations

from collections.abc import Callable

from kernelwright.tools.gpusim.records import KernelInfo, TraceInstruction, WarpStream
from kernelwright.tools.gpusim.traces import InMemoryKernel

FULL = 0xFFFFFFFF


def lanes(mask: int) -> list[int]:
    """Indices of the set bits of ``mask``."""
    return [i for i in range(32) if mask >> i & 1]


def _mem(pc: int, op: str, dests: tuple[str, ...], srcs: tuple[str, ...], base: int, stride: int,
         width: int, mask: int) -> TraceInstruction:
    addrs = tuple(base + i * stride for i in lanes(mask))
    return TraceInstruction(pc, mask, op, dests, srcs, width, addrs)


def ld_global(pc: int, dest: str, base: int, stride: int, width: int = 4, mask: int = FULL,
              addr_reg: str = "R2") -> TraceInstruction:
    """``LDG``: lane i reads ``width`` bytes at ``base + i*stride``."""
    return _mem(pc, f"LDG.E.{width * 8}.SYS", (dest,), (addr_reg,), base, stride, width, mask)


def st_global(pc: int, src: str, base: int, stride: int, width: int = 4,
              mask: int = FULL) -> TraceInstruction:
    """``STG``: lane i writes at ``base + i*stride``."""
    return _mem(pc, "STG.E.SYS", (), ("R2", src), base, stride, width, mask)


def ld_shared(pc: int, dest: str, base: int, stride: int, width: int = 4,
              mask: int = FULL) -> TraceInstruction:
    """``LDS``: lane i reads shared memory at ``base + i*stride``."""
    return _mem(pc, "LDS", (dest,), ("R3",), base, stride, width, mask)


def st_shared(pc: int, src: str, base: int, stride: int, width: int = 4,
              mask: int = FULL) -> TraceInstruction:
    """``STS``: lane i writes shared memory at ``base + i*stride``."""
    return _mem(pc, "STS", (), ("R3", src), base, stride, width, mask)


def alu(pc: int, dest: str, srcs: tuple[str, ...], op: str = "FFMA") -> TraceInstruction:
    """An arithmetic instruction."""
    return TraceInstruction(pc, FULL, op, (dest,), srcs)


def bar(pc: int) -> TraceInstruction:
    """``BAR.SYNC``."""
    return TraceInstruction(pc, FULL, "BAR.SYNC")


def exit_(pc: int) -> TraceInstruction:
    """``EXIT``."""
    return TraceInstruction(pc, FULL, "EXIT")


def synthetic_kernel(
    *, ctas: int, warps_per_cta: int, body: Callable[[int, int], list[TraceInstruction]],
    nregs: int = 32, shmem: int = 0, name: str = "synthetic", kernel_id: int = 1,
) -> InMemoryKernel:
    """A 1-D grid of ``ctas`` blocks of ``32*warps_per_cta`` threads; ``body(cta, warp)``."""
    info = KernelInfo(kernel_id, name, (ctas, 1, 1), (32 * warps_per_cta, 1, 1), shmem=shmem,
                      nregs=nregs)
    streams = [WarpStream((c, 0, 0), w, tuple(body(c, w)))
               for c in range(ctas) for w in range(warps_per_cta)]
    return InMemoryKernel(info, streams)
