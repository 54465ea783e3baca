"""What ``/proc/cpuinfo`` says about this machine's CPU, read once per process.

The file repeats one block of ``key : value`` lines per logical CPU; the first block describes
the model (all cores of a machine are the same kind here). Missing file (not Linux) -> empty.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")


def parse_cpuinfo(text: str) -> dict[str, str]:
    """The ``key : value`` pairs of the first processor block of ``text``."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break
            continue
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    return fields


@cache
def cpu_fields() -> dict[str, str]:
    """:func:`parse_cpuinfo` of this machine's ``/proc/cpuinfo`` (empty when unreadable)."""
    try:
        return parse_cpuinfo(CPUINFO.read_text())
    except OSError:
        return {}


def cpu_model() -> str | None:
    """The CPU's model name (``model name``), or ``None`` when unknown."""
    return cpu_fields().get("model name") or None


def cpu_signature() -> str:
    """The CPU's model and instruction-set flags: ``-march=native`` builds are only valid on a
    CPU with the same signature, so build caches key on it."""
    fields = cpu_fields()
    if not fields:
        return "unknown-cpu"
    return f"model name\t: {fields.get('model name', '')}\nflags\t\t: {fields.get('flags', '')}"


SIMD_FLAGS = (
    "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile", "avx2", "fma", "sse4_2", "asimd", "sve"
)
CACHES = Path("/sys/devices/system/cpu/cpu0/cache")


def host_summary() -> str:
    """One line: CPU model, logical cores, SIMD extensions and cache sizes of this machine."""
    import os

    flags = set(cpu_fields().get("flags", cpu_fields().get("Features", "")).split())
    simd = [f for f in SIMD_FLAGS if f in flags]
    caches = []
    for index in sorted(CACHES.glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        caches.append(f"L{level}{'d' if kind == 'Data' else ''} {size}" if kind != "Instruction"
                      else "")
    parts = [cpu_model() or "unknown CPU", f"{os.cpu_count()} logical cores"]
    if simd:
        parts.append("SIMD " + ", ".join(simd))
    if caches := [c for c in caches if c]:
        parts.append("caches " + ", ".join(caches) + " (per core or shared)")
    return "CPU: " + "; ".join(parts) + "."
