"""This machine's measured peaks (memory bandwidth, FLOP rate), measured once and cached.

The SYCL default device is this machine's CPU, so the peaks are measured on the same cores with
tuned library code (a large tensor copy; an SGEMM) — the best a kernel here can hope for.
"""

from __future__ import annotations

import json
import logging
import platform
import time
from pathlib import Path

import torch
from pydantic import BaseModel, ConfigDict

log = logging.getLogger(__name__)


class MachinePeaks(BaseModel):
    model_config = ConfigDict(frozen=True)
    machine: str
    bandwidth_gbps: float  # read + write bytes per second, / 1e9
    gflops: float  # fp32
    threads: int


def machine_id() -> str:
    cpu = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{platform.node()}|{cpu or platform.processor()}|{torch.get_num_threads()}t"


def _best_of(fn, repeats: int = 7) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def measure_peaks() -> MachinePeaks:
    """Measure bandwidth with a 64 MiB copy and FLOP rate with a 1024^3 SGEMM (~1 s)."""
    src = torch.rand(16 * 1024 * 1024)
    dst = torch.empty_like(src)
    copy_s = _best_of(lambda: dst.copy_(src))
    a, b = torch.rand(1024, 1024), torch.rand(1024, 1024)
    mm_s = _best_of(lambda: torch.mm(a, b))
    return MachinePeaks(
        machine=machine_id(),
        bandwidth_gbps=2 * src.numel() * 4 / copy_s / 1e9,
        gflops=2 * 1024**3 / mm_s / 1e9,
        threads=torch.get_num_threads(),
    )


def machine_peaks(cache_dir: Path) -> MachinePeaks:
    """Cached peaks for this machine; measured on first use (or when the machine changed)."""
    path = Path(cache_dir) / "machine_peaks.json"
    if path.exists():
        try:
            peaks = MachinePeaks.model_validate_json(path.read_text())
            if peaks.machine == machine_id():
                return peaks
        except (ValueError, json.JSONDecodeError):
            log.warning("ignoring unreadable %s; measuring again", path)
    peaks = measure_peaks()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(peaks.model_dump_json(indent=1))
    tmp.replace(path)
    log.info("measured machine peaks: %s", peaks)
    return peaks
