"""Accel-Sim v5 trace folders: a writer (a ``TraceSink``) and streaming readers.

Writer: :class:`TraceDirWriter` turns what the PTX emulator executes into a folder that
Accel-Sim's tools and :func:`read_trace_dir` understand::

    out/kernelslist.g          MemcpyHtoD,0x<addr>,<bytes> | kernel-N.traceg, one per line
    out/kernel-1.traceg        header, then #BEGIN_TB / thread block / warp / insts / lines

Readers: :func:`read_trace_dir` walks a folder's kernelslist in order (memcpy commands too);
:class:`TraceKernelFile` reads one real ``.trace`` / ``.traceg`` (v3-v5, optionally ``.xz``),
streaming its warps.

Example:
    >>> with TraceDirWriter(tmp_path) as w:  # doctest: +SKIP
    ...     launch(ptx, "saxpy", grid, block, args, sink=w)
    >>> [k.info.name for k in iter_kernels(tmp_path)]  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import lzma
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO

from kernelwright.tools.gpusim._trace import TraceSampling
from kernelwright.tools.gpusim._trace_format import (
    format_header,
    format_instruction,
)
from kernelwright.tools.gpusim._trace_reader import (
    MemcpyCommand,
    TraceKernelFile,
    iter_kernels,
    read_trace_dir,
)
from kernelwright.tools.gpusim.records import KernelInfo, WarpStream

__all__ = [
    "InMemoryKernel",
    "MemcpyCommand",
    "MemoryTraceSink",
    "TraceDirWriter",
    "TraceKernelFile",
    "TraceSampling",
    "iter_kernels",
    "read_trace_dir",
]

logger = logging.getLogger(__name__)
SAMPLED_CTAS_KEY = "sampled ctas"  # header key "-sampled ctas = kept/total"


def _kept_ctas(sampling: TraceSampling, grid: tuple[int, int, int]) -> int:
    """How many thread blocks of ``grid`` ``sampling`` keeps."""
    every = max(sampling.cta_every, 1)
    kept = math.ceil(math.prod(grid) / every)
    return kept if sampling.max_ctas is None else min(kept, sampling.max_ctas)


def _samples(sampling: TraceSampling) -> bool:
    return sampling.cta_every > 1 or sampling.max_ctas is not None or bool(
        sampling.warps_per_cta)


class TraceDirWriter:
    """Write an Accel-Sim v5 trace folder; implements ``TraceSink``.

    Thread blocks are written as the emulator finishes their warps; warps of one block must
    arrive together (a block that shows up again later is written as a second ``#BEGIN_TB``
    section, with a warning). Kernel ids are assigned 1, 2, ... in launch order.

    Args:
        out_dir: folder to create (or reuse; its kernelslist.g is rewritten).
        sampling: optional size bounds, the emulator's ``TraceSampling`` (keep thread blocks
            whose linear id is a multiple of ``cta_every``, at most ``max_ctas`` of them, and
            the first ``warps_per_cta`` warps of each). The header then says
            ``-sampled ctas = kept/total`` and the timing model extrapolates by waves.
        compress_addresses: False writes address mode 0 (one address per lane).
        xz: write ``kernel-N.traceg.xz`` (the kernelslist still names ``kernel-N.traceg``).
        source: value of the ``-trace source`` header line.
    """

    def __init__(
        self,
        out_dir: str | Path,
        *,
        sampling: TraceSampling | None = None,
        compress_addresses: bool = True,
        xz: bool = False,
        source: str = "ptx-emulator",
    ) -> None:
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.sampling = sampling or TraceSampling()
        self.compress = compress_addresses
        self.xz = xz
        self.source = source
        self.kernel_files: list[Path] = []
        self.warp_instructions = 0
        self._list = open(self.out_dir / "kernelslist.g", "w", encoding="utf-8")  # noqa: SIM115
        self._fh: IO[str] | None = None
        self._info: KernelInfo | None = None
        self._cta: tuple[int, int, int] | None = None
        self._kept: set[tuple[int, int, int]] = set()

    def __repr__(self) -> str:
        return f"TraceDirWriter({str(self.out_dir)!r}, kernels={len(self.kernel_files)})"

    def __enter__(self) -> TraceDirWriter:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def record_memcpy(self, addr: int, nbytes: int, kind: str = "MemcpyHtoD") -> None:
        """Append a ``MemcpyHtoD,0x<addr>,<bytes>`` command to the kernelslist."""
        self._list.write(f"{kind},0x{addr:016x},{nbytes}\n")

    def begin_kernel(self, info: KernelInfo) -> None:
        """Open ``kernel-N.traceg`` and write its header."""
        if self._fh is not None:
            self.end_kernel()
        kid = len(self.kernel_files) + 1
        name = f"kernel-{kid}.traceg"
        path = self.out_dir / (name + ".xz" if self.xz else name)
        if _samples(self.sampling):
            kept = _kept_ctas(self.sampling, info.grid)
            extra = {**info.extra, SAMPLED_CTAS_KEY: f"{kept}/{math.prod(info.grid)}"}
            info = KernelInfo(**{**_fields(info), "extra": extra})
        opener = lzma.open if self.xz else open
        self._fh = opener(path, "wt", encoding="utf-8")
        self._fh.write(format_header(info, kid, self.source) + "\n")
        self._list.write(name + "\n")
        self.kernel_files.append(path)
        self._info, self._cta, self._kept = info, None, set()

    def warp(self, stream: WarpStream) -> None:
        """Write one warp (opening or closing ``#BEGIN_TB`` sections as needed)."""
        if self._fh is None or self._info is None:
            raise RuntimeError("TraceDirWriter.warp() before begin_kernel(); call it first")
        if not self._keep(stream):
            return
        fh = self._fh
        if stream.cta != self._cta:
            self._close_tb()
            if stream.cta in self._kept:
                logger.warning("thread block %s arrived in two parts; written twice", stream.cta)
            self._kept.add(stream.cta)
            fh.write("#BEGIN_TB\n\nthread block = {},{},{}\n".format(*stream.cta))
            if stream.cluster is not None:
                c = stream.cluster
                fh.write("cluster id = {},{},{}\n".format(*c.cluster_id)
                         + "cluster cta = {},{},{}\n".format(*c.cta_in_cluster)
                         + f"cluster rank = {c.rank}\n")
            fh.write("\n")
            self._cta = stream.cta
        fh.write(f"warp = {stream.warp_id}\ninsts = {len(stream.instructions)}\n")
        compress = self.compress
        fh.write("".join(format_instruction(i, compress) + "\n" for i in stream.instructions))
        fh.write("\n")
        self.warp_instructions += len(stream.instructions)

    def end_kernel(self) -> None:
        """Close the current kernel file."""
        if self._fh is not None:
            self._close_tb()
            self._fh.close()
            self._fh, self._info = None, None
        self._list.flush()

    def close(self) -> None:
        """Close any open kernel and the kernelslist."""
        self.end_kernel()
        self._list.close()

    def _close_tb(self) -> None:
        if self._cta is not None and self._fh is not None:
            self._fh.write("#END_TB\n\n")
        self._cta = None

    def _keep(self, stream: WarpStream) -> bool:
        s, info = self.sampling, self._info
        assert info is not None
        if s.warps_per_cta and stream.warp_id >= s.warps_per_cta:
            return False
        if stream.cta in self._kept:
            return True
        gx, gy, _ = info.grid
        x, y, z = stream.cta
        linear, every = x + gx * (y + gy * z), max(s.cta_every, 1)
        return linear % every == 0 and (s.max_ctas is None or linear // every < s.max_ctas)


def _fields(info: KernelInfo) -> dict[str, object]:
    return {name: getattr(info, name) for name in KernelInfo.__dataclass_fields__}


# ----------------------------------------------------------------------------- in memory
@dataclass
class InMemoryKernel:
    """A kernel held in memory (tests, small emulator runs); implements ``KernelTrace``."""

    info: KernelInfo
    streams: list[WarpStream] = field(default_factory=list)

    def warps(self) -> Iterator[WarpStream]:
        """Yield the warps in the order they were recorded."""
        return iter(self.streams)


class MemoryTraceSink:
    """A ``TraceSink`` that keeps every kernel in memory (``.kernels``)."""

    def __init__(self) -> None:
        self.kernels: list[InMemoryKernel] = []

    def begin_kernel(self, info: KernelInfo) -> None:
        """Start a new kernel."""
        self.kernels.append(InMemoryKernel(info))

    def warp(self, stream: WarpStream) -> None:
        """Record one warp."""
        self.kernels[-1].streams.append(stream)

    def end_kernel(self) -> None:
        """Nothing to do: the kernel is already stored."""
