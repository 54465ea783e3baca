"""Streaming readers for Accel-Sim kernel trace files (``.trace``, ``.traceg``, maybe ``.xz``).

A kernel file's header is read eagerly (a few lines); its warps are streamed: a ``.traceg`` file
is already grouped by thread block and warp, so one warp is held in memory at a time. A raw
``.trace`` interleaves lines of all warps; it is read twice - once to find the last line of each
thread block, then again holding only the thread blocks that are still open.
"""

from __future__ import annotations

import logging
import lzma
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from kernelwright.tools.gpusim._trace_format import (
    TraceFormatError,
    header_to_info,
    parse_header_line,
    parse_instruction,
)
from kernelwright.tools.gpusim.records import KernelInfo, TraceInstruction, WarpStream

logger = logging.getLogger(__name__)
_Cta = tuple[int, int, int]
_CACHE_LINES = 200_000  # distinct instruction lines remembered per file (bounds memory)


@dataclass(frozen=True, slots=True)
class MemcpyCommand:
    """A ``MemcpyHtoD,0x<addr>,<bytes>`` line of a kernelslist."""

    kind: str
    addr: int
    nbytes: int


def open_text(path: Path) -> IO[str]:
    """Open a trace text file, decompressing ``.xz`` on the fly."""
    if path.suffix == ".xz":
        return lzma.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")  # noqa: SIM115


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
                    grouped = line.startswith("#BEGIN_TB")
                    break
        if "kernel name" not in fields:
            raise TraceFormatError(
                f"{self.path}: no '-kernel name = ...' header line; this is not an Accel-Sim "
                "kernel trace. Fix: point the reader at kernel-N.trace[g] files or their folder."
            )
        return fields, grouped

    def warps(self) -> Iterator[WarpStream]:
        """Yield the kernel's warps, grouped by thread block, streaming from disk."""
        if self.grouped:
            yield from self._grouped_warps()
        else:
            yield from self._raw_warps()

    # ------------------------------------------------------------------ .traceg
    def _grouped_warps(self) -> Iterator[WarpStream]:
        skip = (4 if self.version < 3 else 0) + (1 if self.lineinfo else 0)
        cta: _Cta = (0, 0, 0)
        warp_id: int | None = None
        insts: list[TraceInstruction] = []
        cache: dict[str, TraceInstruction] = {}  # identical lines (same PC, mask, addresses)
        with open_text(self.path) as fh:
            for lineno, raw in enumerate(fh, 1):
                line = raw.strip()
                if not line or line[0] == "-":
                    continue
                head = line[0]
                if head in "#tw":
                    if warp_id is not None and (head != "#" or line.startswith("#END_TB")):
                        yield WarpStream(cta, warp_id, tuple(insts))
                        warp_id, insts = None, []
                    if head == "t":
                        cta = _parse_cta(line.partition("=")[2], self.path, lineno)
                    elif head == "w":
                        warp_id = int(line.partition("=")[2])
                elif head != "i":  # "insts = N" carries no information we need
                    inst = cache.get(line)
                    if inst is None:
                        inst = self._parse(line.split(), skip, lineno)
                        if len(cache) < _CACHE_LINES:
                            cache[line] = inst
                    insts.append(inst)
        if warp_id is not None:
            yield WarpStream(cta, warp_id, tuple(insts))

    # ------------------------------------------------------------------ raw .trace
    def _raw_warps(self) -> Iterator[WarpStream]:
        last_line = self._last_line_per_cta()
        skip = 1 if self.lineinfo else 0
        open_ctas: dict[_Cta, dict[int, list[TraceInstruction]]] = {}
        cache: dict[str, TraceInstruction] = {}
        with open_text(self.path) as fh:
            for lineno, raw in enumerate(fh, 1):
                tok = raw.split(None, 4)
                if len(tok) < 5 or not tok[0].isdigit():
                    continue
                cta = (int(tok[0]), int(tok[1]), int(tok[2]))
                rest = tok[4].strip()
                inst = cache.get(rest)
                if inst is None:
                    inst = self._parse(rest.split(), skip, lineno)
                    if len(cache) < _CACHE_LINES:
                        cache[rest] = inst
                warps = open_ctas.setdefault(cta, {})
                warps.setdefault(int(tok[3]), []).append(inst)
                if last_line[cta] == lineno:
                    del open_ctas[cta]
                    for wid in sorted(warps):
                        yield WarpStream(cta, wid, tuple(warps[wid]))

    def _last_line_per_cta(self) -> dict[_Cta, int]:
        last: dict[_Cta, int] = {}
        with open_text(self.path) as fh:
            for lineno, raw in enumerate(fh, 1):
                tok = raw.split(None, 3)
                if len(tok) == 4 and tok[0].isdigit():
                    last[(int(tok[0]), int(tok[1]), int(tok[2]))] = lineno
        return last

    def _parse(self, tok: list[str], skip: int, lineno: int) -> TraceInstruction:
        try:
            return parse_instruction(tok, skip)
        except (ValueError, IndexError) as exc:
            raise TraceFormatError(
                f"{self.path}:{lineno}: cannot parse instruction {' '.join(tok)!r} ({exc}). "
                "Fix: check that the active-lane mask matches the number of addresses and "
                "that the header's tracer version / enable lineinfo fit the lines."
            ) from exc


def _parse_cta(text: str, path: Path, lineno: int) -> _Cta:
    try:
        x, y, z = (int(v) for v in text.split(","))
    except ValueError as exc:
        raise TraceFormatError(
            f"{path}:{lineno}: bad 'thread block = x,y,z' line. Fix: three comma-separated ints."
        ) from exc
    return (x, y, z)


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
            else:
                yield TraceKernelFile(_resolve_kernel(root, line))


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
