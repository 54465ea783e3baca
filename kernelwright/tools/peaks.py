"""This machine's measured peaks (memory bandwidth, FLOP rate), measured once and cached.

The SYCL default device is this machine's CPU, so the peaks are measured on the same cores with
tuned library code (a large tensor copy; an SGEMM) — the best a kernel here can hope for.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import time
from pathlib import Path

import torch

from kernelwright.spec.peaks import MachinePeaks
from kernelwright.tools.cpuinfo import cpu_model

log = logging.getLogger(__name__)


def machine_id() -> str:
    cpu = cpu_model()
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
    """Bandwidth: the best of a 64 MiB copy and a triad-like add (bytes read + written); FLOP
    rate: a 1024^3 SGEMM. Best of several repeats each (~1-2 s)."""
    src, other = torch.rand(16 * 1024 * 1024), torch.rand(16 * 1024 * 1024)
    dst = torch.empty_like(src)
    copy_s = _best_of(lambda: dst.copy_(src), repeats=11)
    add_s = _best_of(lambda: torch.add(src, other, out=dst), repeats=11)
    nbytes = src.numel() * 4
    a, b = torch.rand(1024, 1024), torch.rand(1024, 1024)
    mm_s = _best_of(lambda: torch.mm(a, b))
    return MachinePeaks(
        machine=machine_id(),
        bandwidth_gbps=max(2 * nbytes / copy_s, 3 * nbytes / add_s) / 1e9,
        gflops=2 * 1024**3 / mm_s / 1e9,
        threads=torch.get_num_threads(),
    )


def machine_peaks(cache_dir: Path) -> MachinePeaks:
    """This machine's peaks: measured now (~2 s) and merged with the cache by maximum.

    Library code timed while the machine is busy under-estimates the roof, so every run
    measures again and the cache keeps the best rate ever measured here.
    """
    path = Path(cache_dir) / "machine_peaks.json"
    fresh = measure_peaks()
    cached = _load(path)
    if cached is not None and cached.machine == fresh.machine:
        fresh = fresh.model_copy(
            update={
                "bandwidth_gbps": max(fresh.bandwidth_gbps, cached.bandwidth_gbps),
                "gflops": max(fresh.gflops, cached.gflops),
            }
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(fresh.model_dump_json(indent=1))
    tmp.replace(path)
    log.info("machine peaks: %s", fresh)
    return fresh


def _load(path: Path) -> MachinePeaks | None:
    if not path.exists():
        return None
    try:
        return MachinePeaks.model_validate_json(path.read_text())
    except (ValueError, json.JSONDecodeError):
        log.warning("ignoring unreadable %s; measuring again", path)
        return None
