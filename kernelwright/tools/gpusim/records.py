"""Trace records shared by the emulator (producer), the trace writer/reader, and the timing model.

One warp-level instruction as Accel-Sim's tracer records it. The emulator produces these; the
writer serialises them to Accel-Sim v5 ``.traceg`` text; the reader yields them back from real
traces; the timing model consumes them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True, slots=True)
class TraceInstruction:
    """One warp-instruction.

    Attributes:
        pc: program counter (the emulator uses 16 x PTX instruction index).
        mask: 32-bit mask of lanes that executed it (active and predicate-true).
        opcode: e.g. ``LDG.E.128.SYS`` in real traces, ``ld.global.f32`` from the emulator.
        dests: destination registers, e.g. ``("R12",)``; at most one in real traces.
        srcs: source registers.
        mem_width: bytes accessed per lane; 0 for non-memory instructions.
        addresses: one address per set bit of ``mask``, in lane order; empty if not memory.
        immediate: the trailing immediate field of the trace line (0 when absent).
    """

    pc: int
    mask: int
    opcode: str
    dests: tuple[str, ...] = ()
    srcs: tuple[str, ...] = ()
    mem_width: int = 0
    addresses: tuple[int, ...] = ()
    immediate: int = 0


@dataclass(frozen=True, slots=True)
class KernelInfo:
    """The header of one kernel launch in a trace."""

    kernel_id: int
    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shmem: int = 0
    nregs: int = 0
    binary_version: int = 90
    stream_id: int = 0
    shmem_base: int = 0
    local_base: int = 0
    extra: dict[str, str] = field(default_factory=dict)  # any other "-key = value" header lines


@dataclass(frozen=True, slots=True)
class ClusterPosition:
    """Where a thread block sits in its thread-block cluster (Hopper and later).

    The current Accel-Sim tracer writes these after ``thread block = x,y,z`` in ``.traceg``
    files (``cluster id = x,y,z``, ``cluster cta = x,y,z``, ``cluster rank = n``) and as fields
    5-11 of raw ``.trace`` lines. A GPU without clusters reports every block as cluster
    ``(x,y,z)`` of one block: id = block index, cta = (0,0,0), rank 0.
    """

    cluster_id: tuple[int, int, int]
    cta_in_cluster: tuple[int, int, int]
    rank: int


@dataclass(frozen=True, slots=True)
class WarpStream:
    """All instructions one warp executed, in order (``cluster``: None when the trace has none)."""

    cta: tuple[int, int, int]
    warp_id: int
    instructions: tuple[TraceInstruction, ...]
    cluster: ClusterPosition | None = None


class TraceSink(Protocol):
    """Where an emulator sends what it executes (a trace writer, a counter, a timing model)."""

    def begin_kernel(self, info: KernelInfo) -> None: ...

    def warp(self, stream: WarpStream) -> None: ...

    def end_kernel(self) -> None: ...


class KernelTrace(Protocol):
    """A kernel read back from a trace: its header and a lazy iterator over its warps."""

    info: KernelInfo

    def warps(self) -> Iterator[WarpStream]: ...
