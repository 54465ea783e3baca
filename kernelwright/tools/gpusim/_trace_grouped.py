"""Stream the warps of a grouped ``.traceg`` file (Accel-Sim post-processed, tracer v3-v5).

Body grammar (blank lines anywhere; ``#`` lines other than the two markers are comments)::

    #BEGIN_TB
    thread block = x,y,z
    [cluster id = x,y,z]          current post-processing (thread-block clusters)
    [cluster cta = x,y,z]
    [cluster rank = n]
    warp = n
    insts = count
    <count instruction lines>     repeated per warp
    #END_TB

Instruction lines are ``[line_num] PC mask ...`` (``line_num`` when ``-enable lineinfo = 1``);
tracer versions below 3 also start each line with ``tbx tby tbz warp``. One warp is held in
memory at a time. Anything else is a :class:`TraceFormatError` naming file, line, and what was
expected there.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from kernelwright.errors import TraceFormatError
from kernelwright.tools.gpusim._trace_format import open_text, parse_line
from kernelwright.tools.gpusim.records import ClusterPosition, TraceInstruction, WarpStream

_CACHE_LINES = 200_000  # distinct instruction lines remembered per file (bounds memory)
_STRUCTURE = frozenset("#twic-")  # first characters of non-instruction lines ('c': "cluster")


class _Block:
    """Parser state: the open thread block and warp."""

    __slots__ = ("path", "open", "cta", "cluster", "warp", "declared", "insts", "start")

    def __init__(self, path: Path) -> None:
        self.path, self.open = path, False
        self.cta: tuple[int, int, int] | None = None
        self.cluster: list[object] = [None, None, None]
        self.warp: int | None = None
        self.declared: int | None = None
        self.insts: list[TraceInstruction] = []
        self.start = 0

    def error(self, lineno: int, expected: str, line: str) -> TraceFormatError:
        return TraceFormatError(
            f"{self.path}:{lineno}: expected {expected}, got {line[:80]!r}. Fix: the .traceg "
            "body is '#BEGIN_TB', 'thread block = x,y,z', optional 'cluster id/cta = x,y,z' "
            "and 'cluster rank = n', then per warp 'warp = n', 'insts = n' and its lines, "
            "then '#END_TB'."
        )

    def flush(self, lineno: int) -> WarpStream | None:
        """Close the open warp (checking ``insts = n``); None if no warp is open."""
        if self.warp is None:
            return None
        if self.declared is not None and self.declared != len(self.insts):
            raise TraceFormatError(
                f"{self.path}:{self.start}: warp {self.warp} of thread block {self.cta} "
                f"declares insts = {self.declared} but has {len(self.insts)} instruction "
                f"lines (up to line {lineno}). Fix: a truncated or hand-edited file; "
                "re-run the post-processing or correct the count."
            )
        cid, ccta, rank = self.cluster
        cluster = None if cid is None else ClusterPosition(
            cid, ccta or (0, 0, 0), rank or 0)  # type: ignore[arg-type]
        assert self.cta is not None
        stream = WarpStream(self.cta, self.warp, tuple(self.insts), cluster)
        self.warp, self.declared, self.insts = None, None, []
        return stream

    def structure(self, line: str, lineno: int) -> WarpStream | None:
        """Handle a non-instruction line; returns a warp it closed, if any."""
        if line[0] == "-" or (line[0] == "#" and not line.startswith(("#BEGIN_TB", "#END_TB"))):
            return None  # header or comment
        key, eq, value = line.partition("=")
        key = key.strip()
        if line.startswith("#BEGIN_TB"):
            if self.open:
                raise self.error(lineno, "'#END_TB' before the next '#BEGIN_TB'", line)
            self.open, self.cta, self.cluster = True, None, [None, None, None]
            return None
        if not self.open:
            raise self.error(lineno, "'#BEGIN_TB' before thread-block contents", line)
        if line.startswith("#END_TB"):
            self.open = False
            return self.flush(lineno)
        if key == "thread block" and eq:
            self.cta = _triple(value, self, lineno, line, "'thread block = x,y,z' (three ints)")
        elif key in ("cluster id", "cluster cta") and eq:
            what = f"'{key} = x,y,z' (three ints)"
            self.cluster[0 if key == "cluster id" else 1] = _triple(value, self, lineno, line,
                                                                    what)
        elif key == "cluster rank" and eq:
            self.cluster[2] = _int(value, self, lineno, line, "'cluster rank = n' (an int)")
        elif key == "warp" and eq:
            if self.cta is None:
                raise self.error(lineno, "'thread block = x,y,z' before 'warp = n'", line)
            closed = self.flush(lineno)
            self.warp = _int(value, self, lineno, line, "'warp = n' (an int)")
            self.start = lineno
            return closed
        elif key == "insts" and eq:
            if self.warp is None:
                raise self.error(lineno, "'warp = n' before 'insts = n'", line)
            self.declared = _int(value, self, lineno, line, "'insts = n' (an int)")
        else:
            raise self.error(lineno, "an instruction line or a thread-block header line", line)
        return None


def _int(text: str, block: _Block, lineno: int, line: str, expected: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise block.error(lineno, expected, line) from None


def _triple(text: str, block: _Block, lineno: int, line: str,
            expected: str) -> tuple[int, int, int]:
    parts = text.split(",")
    if len(parts) != 3:
        raise block.error(lineno, expected, line)
    x, y, z = (_int(p, block, lineno, line, expected) for p in parts)
    return (x, y, z)


def grouped_warps(path: Path, skip: int) -> Iterator[WarpStream]:
    """Yield the warps of ``path``; ``skip`` leading fields per instruction line are ignored."""
    block = _Block(path)
    cache: dict[str, TraceInstruction] = {}  # identical lines (same PC, mask, addresses)
    insts = block.insts
    with open_text(path) as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line:
                continue
            if line[0] in _STRUCTURE and (line[0] != "c" or line.startswith("cluster")):
                closed = block.structure(line, lineno)
                insts = block.insts
                if closed is not None:
                    yield closed
                continue
            inst = cache.get(line)
            if inst is None:
                if block.warp is None:
                    raise block.error(lineno, "'warp = n' before instruction lines", line)
                inst = parse_line(line.split(), skip, path, lineno)
                if len(cache) < _CACHE_LINES:
                    cache[line] = inst
            elif block.warp is None:
                raise block.error(lineno, "'warp = n' before instruction lines", line)
            insts.append(inst)
    if block.open:
        raise TraceFormatError(
            f"{path}: the file ends inside a thread block (no '#END_TB' after line "
            f"{block.start}). Fix: the trace is truncated; re-run the post-processing."
        )
