"""Stream the warps of a raw ``.trace`` file, the NVBit tracer's direct output.

Raw lines interleave all warps; each starts with the warp's position, then the instruction::

    tbx tby tbz warp                                       PC mask ...   (tracer v3/v4)
    tbx tby tbz warp sm warp_in_sm                         PC mask ...   (print_core_id)
    tbx tby tbz warp cidx cidy cidz ctax ctay ctaz rank    PC mask ...   (current, clusters)

with a decimal ``line_num`` before the PC when ``-enable lineinfo = 1``. The number of leading
fields is found once per file from the first instruction line: the layout under which that line
has a hex PC, then an 8-digit hex mask, then a decimal ``dest_num``, and decimal fields before.

The file is read twice - once to find the last line of each thread block, then again holding
only the thread blocks still open. As the post-processor does, of each pair of ``LDGSTS`` lines
of one warp (one real instruction, traced once per address space) the second is kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from kernelwright.errors import TraceFormatError
from kernelwright.tools.gpusim._trace_format import open_text, parse_line
from kernelwright.tools.gpusim.records import ClusterPosition, TraceInstruction, WarpStream

_Cta = tuple[int, int, int]
_CACHE_LINES = 200_000
LAYOUTS = (4, 11, 6)  # leading fields: v3/v4, current (clusters), v4 with print_core_id


def leading_fields(tok: list[str], lineinfo: bool) -> int | None:
    """How many position fields precede the instruction on a raw line (None: no layout fits)."""
    extra = 1 if lineinfo else 0
    for n in LAYOUTS:
        pc = n + extra
        if len(tok) < pc + 4 or not all(t.isdigit() for t in tok[:pc]):
            continue
        mask = tok[pc + 1]
        if _hex(tok[pc]) and len(mask) == 8 and _hex(mask) and tok[pc + 2].isdigit():
            return n
    return None


def _hex(text: str) -> bool:
    try:
        int(text, 16)
    except ValueError:
        return False
    return True


def _layout(path: Path, lineinfo: bool) -> int:
    with open_text(path) as fh:
        for lineno, raw in enumerate(fh, 1):
            tok = raw.split()
            if not tok or not tok[0].isdigit():
                continue
            n = leading_fields(tok, lineinfo)
            if n is None:
                raise TraceFormatError(
                    f"{path}:{lineno}: expected a raw trace line 'tbx tby tbz warp "
                    "[cluster id xyz, cluster cta xyz, rank] "
                    f"{'line_num ' if lineinfo else ''}PC mask dest_num ...', got "
                    f"{raw.strip()[:80]!r}. Fix: check '-enable lineinfo' in the header and "
                    "that the file is an Accel-Sim .trace (grouped files end in .traceg)."
                )
            return n
    return 4


def _last_line_per_cta(path: Path) -> dict[_Cta, int]:
    last: dict[_Cta, int] = {}
    with open_text(path) as fh:
        for lineno, raw in enumerate(fh, 1):
            tok = raw.split(None, 3)
            if len(tok) == 4 and tok[0].isdigit():
                last[(int(tok[0]), int(tok[1]), int(tok[2]))] = lineno
    return last


def raw_warps(path: Path, lineinfo: bool) -> Iterator[WarpStream]:
    """Yield the warps of ``path``, thread block by thread block, warps in id order."""
    lead = _layout(path, lineinfo)
    last_line = _last_line_per_cta(path)
    skip = 1 if lineinfo else 0
    open_ctas: dict[_Cta, dict[int, list[TraceInstruction]]] = {}
    clusters: dict[_Cta, ClusterPosition | None] = {}
    ldgsts_seen: set[tuple[_Cta, int]] = set()
    cache: dict[str, TraceInstruction] = {}
    with open_text(path) as fh:
        for lineno, raw in enumerate(fh, 1):
            tok = raw.split(None, lead)
            if len(tok) <= lead or not tok[0].isdigit():
                continue
            try:
                cta = (int(tok[0]), int(tok[1]), int(tok[2]))
                wid = int(tok[3])
            except ValueError:
                raise _position_error(path, lineno, raw, lead) from None
            rest = tok[lead].strip()
            inst = cache.get(rest)
            if inst is None:
                inst = parse_line(rest.split(), skip, path, lineno)
                if len(cache) < _CACHE_LINES:
                    cache[rest] = inst
            if "LDGSTS" in inst.opcode and _first_of_pair(ldgsts_seen, (cta, wid)):
                continue
            warps = open_ctas.get(cta)
            if warps is None:
                warps = open_ctas[cta] = {}
                clusters[cta] = _cluster(tok, path, lineno, raw) if lead == 11 else None
            warps.setdefault(wid, []).append(inst)
            if last_line[cta] == lineno:
                del open_ctas[cta]
                cluster = clusters.pop(cta)
                for w in sorted(warps):
                    yield WarpStream(cta, w, tuple(warps[w]), cluster)


def _first_of_pair(seen: set[tuple[_Cta, int]], key: tuple[_Cta, int]) -> bool:
    """True for the 1st, 3rd, ... LDGSTS line of a warp (dropped), False for the 2nd, 4th ..."""
    if key in seen:
        seen.discard(key)
        return False
    seen.add(key)
    return True


def _cluster(tok: list[str], path: Path, lineno: int, raw: str) -> ClusterPosition:
    try:
        v = [int(t) for t in tok[4:11]]
    except ValueError:
        raise _position_error(path, lineno, raw, 11) from None
    return ClusterPosition((v[0], v[1], v[2]), (v[3], v[4], v[5]), v[6])


def _position_error(path: Path, lineno: int, raw: str, lead: int) -> TraceFormatError:
    return TraceFormatError(
        f"{path}:{lineno}: expected {lead} decimal position fields (block x y z, warp"
        f"{', cluster id xyz, cluster cta xyz, rank' if lead == 11 else ''}) like the file's "
        f"first line, got {raw.strip()[:80]!r}. Fix: the file mixes line layouts or is "
        "corrupt; re-trace the kernel."
    )
