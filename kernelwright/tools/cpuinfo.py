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
