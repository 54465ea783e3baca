"""ptxas, shared by the CUDA backend and the GPU simulator: parse ``ptxas -v`` statistics, map
PTX entry names back to source names, and count the registers ptxas allocates (PTX declares
virtual registers, often hundreds; occupancy needs the allocated count).

ptxas prints, per function::

    ptxas info    : Compiling entry function 'vadd' for 'sm_90'
    ptxas info    : Function properties for vadd
        448 bytes stack frame, 1084 bytes spill stores, 1168 bytes spill loads
    ptxas info    : Used 24 registers, used 1 barriers, 1024 bytes smem, 360 bytes cmem[0]

Only entry functions (kernels) are kept; ``Function properties`` of non-entry device
functions are skipped.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from kernelwright.spec.result import KernelStats

log = logging.getLogger(__name__)

_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_PROPS = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")
_CMEM = re.compile(r"(\d+) bytes cmem\[\d+\]")
_PTX_ENTRY = re.compile(r"^\s*\.(?:visible\s+|weak\s+)?\.entry\s+([\w$]+)", re.M)
_SOURCE_PART = re.compile(r"(\d+)[A-Za-z_]")


def _stats_of(lines: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in lines:
        if m := _FRAME.search(line):
            out.update(stack_bytes=int(m[1]), spill_stores=int(m[2]), spill_loads=int(m[3]))
        if "Used" in line and (m := _USED.search(line)):
            out["registers"] = int(m[1])
            if b := _BARRIERS.search(line):
                out["barriers"] = int(b[1])
            out["shared_bytes"] = int(s[1]) if (s := _SMEM.search(line)) else 0
            cmem = [int(c) for c in _CMEM.findall(line)]
            if cmem:
                out["const_bytes"] = sum(cmem)
    return out


def parse_ptxas(log: str) -> dict[str, KernelStats]:
    """Per-entry statistics from ``ptxas -v`` output (``nvcc -Xptxas -v``), by PTX entry name."""
    blocks: dict[str, list[str]] = {}
    entries: set[str] = set()
    current: str | None = None
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            entries.add(m[1])
            current = m[1]
        elif m := _PROPS.search(line):
            current = m[1]
        elif current is not None:
            blocks.setdefault(current, []).append(line)
    return {name: KernelStats(**_stats_of(blocks.get(name, []))) for name in sorted(entries)}


def ptx_entries(ptx: str) -> list[str]:
    """The ``.entry`` (kernel) names declared in a PTX module, in order."""
    return list(dict.fromkeys(_PTX_ENTRY.findall(ptx)))


def source_name(entry: str) -> str:
    """The source-level name of a PTX entry: unchanged for ``extern "C"``, the demangled
    unqualified name for C++ (``_Z5plainPfi`` -> ``plain``, ``_Z4tmplILi3EEvPf`` -> ``tmpl``,
    ``_ZN2ns3fooEv`` -> ``foo``)."""
    if not entry.startswith("_Z"):
        return entry
    nested = entry.startswith("_ZN")
    pos, name = (3 if nested else 2), None
    while m := _SOURCE_PART.match(entry, pos):  # <length><identifier> components
        length = int(m[1])
        name, pos = entry[m.end(1): m.end(1) + length], m.end(1) + length
        if not nested:
            break
    return name or entry


def entry_names(entries: list[str]) -> dict[str, str]:
    """Map each entry to a unique friendly name (the mangled one where two would collide)."""
    friendly = [source_name(e) for e in entries]
    pairs = zip(entries, friendly, strict=True)
    return {e: (f if friendly.count(f) == 1 else e) for e, f in pairs}


@lru_cache(maxsize=64)
def register_counts(ptx_hash: str, ptx: str, target: str) -> dict[str, int]:
    """Registers per entry from ``ptxas -arch=<target> -v`` ({} when ptxas is unavailable)."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / f"{ptx_hash[:16]}.ptx"
        src.write_text(ptx)
        cmd = [ptxas, f"-arch={target or 'sm_90'}", "-v", str(src), "-o", str(Path(tmp) / "o")]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        log.debug("ptxas failed, trace headers get nregs = 0: %s", proc.stderr[:200])
        return {}
    return {k: s.registers or 0 for k, s in parse_ptxas(proc.stderr + proc.stdout).items()}
