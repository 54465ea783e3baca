"""Streaming readers for Accel-Sim trace folders and kernel files (``.trace[g]``, maybe ``.xz``).

A kernel file's header is read eagerly (a few lines); its warps are streamed by
:mod:`._trace_grouped` (``.traceg``, one warp in memory at a time) or :mod:`._trace_raw`
(``.trace``, interleaved warps, read twice). A folder is walked through its ``kernelslist.g``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kernelwright.errors import TraceFormatError
from kernelwright.tools.gpusim._trace_format import (
    header_to_info,
    open_text,
    parse_header_line,
)
from kernelwright.tools.gpusim._trace_grouped import grouped_warps
from kernelwright.tools.gpusim._trace_raw import raw_warps
from kernelwright.tools.gpusim.records import KernelInfo, WarpStream

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class MemcpyCommand:
    """A ``MemcpyHtoD,0x<addr>,<bytes>`` line of a kernelslist."""

    kind: str
    addr: int
    nbytes: int


class TraceKernelFile:
    """One kernel of a real (or written) Accel-Sim trace; implements ``KernelTrace``.

    Example:
        >>> k = TraceKernelFile(Path("traces/kernel-1.traceg"))  # doctest: +SKIP
        >>> k.info.grid, sum(len(w.instructions) for w in k.warps())  # doctest: +SKIP
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        fields, self.grouped = self._read_header()
        self.info: KernelInfo = header_to_info(fields)
        self.version = _int_or(fields.get("accelsim tracer version"), 5)
        self.lineinfo = fields.get("enable lineinfo", "0").strip() == "1"

    def __repr__(self) -> str:
        kind = "traceg" if self.grouped else "trace"
        return f"TraceKernelFile({str(self.path)!r}, {kind}, v{self.version}, {self.info.name!r})"

    def _read_header(self) -> tuple[dict[str, str], bool]:
        fields: dict[str, str] = {}
        grouped = self.path.name.removesuffix(".xz").endswith(".traceg")
        with open_text(self.path) as fh:
            for line in fh:
                line = line.strip()
                kv = parse_header_line(line)
                if kv is not None:
                    fields.setdefault(*kv)
                elif line and not line.startswith("#traces"):
                    grouped = grouped or line.startswith("#BEGIN_TB")  # a .trace named wrongly
                    break
        if "kernel name" not in fields:
            raise TraceFormatError(
                f"{self.path}: no '-kernel name = ...' header line; this is not an Accel-Sim "
                "kernel trace. Fix: point the reader at kernel-N.trace[g] files or their folder."
            )
        return fields, grouped

    def warps(self) -> Iterator[WarpStream]:
        """Yield the kernel's warps, grouped by thread block, streaming from disk.

        Raises:
            TraceFormatError: a malformed line (the message names file, line and what was
                expected there).
        """
        if self.grouped:
            skip = (4 if self.version < 3 else 0) + (1 if self.lineinfo else 0)
            yield from grouped_warps(self.path, skip)
        else:
            yield from raw_warps(self.path, self.lineinfo)


def _int_or(text: str | None, default: int) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default


# ---------------------------------------------------------------------------- directories
def read_trace_dir(path: str | Path) -> Iterator[TraceKernelFile | MemcpyCommand]:
    """Walk a trace folder's ``kernelslist.g`` (else ``kernelslist``) in order.

    Args:
        path: a trace folder, or a single kernel file.

    Yields:
        Memcpy commands and kernels, in launch order; kernel files are opened lazily.
    """
    root = Path(path)
    if root.is_file():
        yield TraceKernelFile(root)
        return
    listing = _find_listing(root)
    with open_text(listing) as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.lower().startswith("memcpy"):
                yield _parse_memcpy(line, listing, lineno)
            elif line.startswith("kernel"):
                yield TraceKernelFile(_resolve_kernel(root, line))
            else:
                raise TraceFormatError(
                    f"{listing}:{lineno}: expected 'MemcpyHtoD,0x<addr>,<bytes>' or a kernel "
                    f"file name such as kernel-1.traceg, got {line[:80]!r}. Fix: one command "
                    "per line, as the tracer writes them."
                )


def iter_kernels(path: str | Path) -> Iterator[TraceKernelFile]:
    """Like :func:`read_trace_dir`, kernels only."""
    for item in read_trace_dir(path):
        if isinstance(item, TraceKernelFile):
            yield item


def _find_listing(root: Path) -> Path:
    for name in ("kernelslist.g", "kernelslist.g.xz", "kernelslist", "kernelslist.xz"):
        if (root / name).is_file():
            return root / name
    raise TraceFormatError(
        f"{root}: no kernelslist.g or kernelslist. Fix: pass an Accel-Sim trace folder (the "
        "one holding kernelslist.g and kernel-N.traceg) or a single kernel file."
    )


def _resolve_kernel(root: Path, name: str) -> Path:
    stem = name.removesuffix(".xz")
    alternatives = [stem, stem + ".xz"]
    if stem.endswith(".trace"):
        alternatives += [stem + "g", stem + "g.xz"]
    elif stem.endswith(".traceg"):
        alternatives += [stem[:-1], stem[:-1] + ".xz"]
    for alt in alternatives:
        if (root / alt).is_file():
            return root / alt
    raise TraceFormatError(
        f"{root}: the kernelslist names {name!r} but no such file (or .xz/.traceg variant) "
        "exists. Fix: copy the kernel files next to the kernelslist."
    )


def _parse_memcpy(line: str, listing: Path, lineno: int) -> MemcpyCommand:
    try:
        kind, addr, nbytes = (p.strip() for p in line.split(","))
        return MemcpyCommand(kind, int(addr, 16), int(nbytes))
    except ValueError as exc:
        raise TraceFormatError(
            f"{listing}:{lineno}: bad memcpy line {line!r}. Fix: 'MemcpyHtoD,0x<addr>,<bytes>'."
        ) from exc
