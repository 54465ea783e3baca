"""This machine's measured peaks (memory bandwidth, FLOP rate), measured once and cached.

The SYCL default device is this machine's CPU, so the peaks are measured on the same cores with
tuned library code — the best a kernel here can hope for:

- bandwidth: STREAM's triad ``a = b + s*c`` and copy ``a = b`` over 64 MiB fp32 arrays (far
  beyond any last-level cache), bytes counted as STREAM does (reads + writes); the roof is
  the faster of the two, so no kernel measured against it can pass 100%;
- compute: the vendor SGEMM torch calls (``torch.mm`` on 2048 x 2048 fp32).

Each is the best of several repeats. The figures are cached in ``peaks_dir(settings)`` (the
data dir, outside the sandbox's digest-checked build cache) under a key for the machine (CPU
model, core count, torch threads) and the runtime (torch version, measurement method): a new
CPU, thread count or torch measures again; ``refresh=True`` (``kernelwright peaks
--refresh``) re-measures on demand, e.g. after a measurement on a busy machine.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path

from kernelwright.config import Settings
from kernelwright.spec.peaks import MachinePeaks
from kernelwright.tools.cpuinfo import cpu_model

log = logging.getLogger(__name__)

METHOD = (
    "STREAM triad a=b+s*c and copy a=b on 64 MiB fp32 arrays, best of 11 each (roof: the "
    "faster); SGEMM 2048^3 fp32 via torch.mm, best of 5"
)
METHOD_VERSION = "2"  # bump when the measurement changes: older cache entries are not used


def peaks_dir(settings: Settings) -> Path:
    """Where measured peaks are cached."""
    return Path(settings.data_dir) / "peaks"


def peaks_key() -> dict[str, str]:
    """What the peaks are valid for: this machine's CPU, cores and threads, torch's version."""
    import torch

    return {
        "cpu": cpu_model() or platform.processor() or platform.machine() or "unknown",
        "cores": str(os.cpu_count() or 0),
        "threads": str(torch.get_num_threads()),
        "torch": torch.__version__,
        "method": METHOD_VERSION,
    }


def key_name(key: dict[str, str]) -> str:
    """A file name for ``key``: stable, and different for any change of any field."""
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return f"peaks-{digest}.json"


def describe(key: dict[str, str]) -> str:
    return (f"{key.get('cpu', '?')}, {key.get('cores', '?')} cores, {key.get('threads', '?')} "
            f"threads, torch {key.get('torch', '?')}")  # fmt: skip


def machine_id() -> str:
    """One line naming this machine and runtime (the ``machine`` field of its peaks)."""
    return describe(peaks_key())


def _best_of(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def measure_peaks(key: dict[str, str] | None = None) -> MachinePeaks:
    """Measure now (about 3 s; longer on a busy machine): see the module's docstring."""
    import torch

    key = key or peaks_key()
    triad, copy = _stream(torch)
    sgemm = _sgemm(torch)
    return MachinePeaks(
        machine=describe(key), bandwidth_gbps=max(triad, copy), gflops=sgemm,
        threads=int(key.get("threads", "1")), key=key, triad_gbps=triad, copy_gbps=copy,
        sgemm_gflops=sgemm, method=METHOD, measured_at=time.time(),
    )  # fmt: skip


def _stream(torch, n: int = 16 * 1024 * 1024) -> tuple[float, float]:
    """STREAM triad and copy bandwidth in GB/s (``n`` fp32 elements per array)."""
    a, b, c = torch.empty(n), torch.rand(n), torch.rand(n)
    triad_s = _best_of(lambda: torch.add(b, c, alpha=3.0, out=a), repeats=11)
    copy_s = _best_of(lambda: a.copy_(b), repeats=11)
    return 3 * 4 * n / triad_s / 1e9, 2 * 4 * n / copy_s / 1e9


def _sgemm(torch, m: int = 2048) -> float:
    """fp32 GEMM rate of torch's vendor BLAS in GFLOP/s."""
    x, y = torch.rand(m, m), torch.rand(m, m)
    return 2 * m**3 / _best_of(lambda: torch.mm(x, y), repeats=5) / 1e9


def cached_peaks(directory: Path, key: dict[str, str] | None = None) -> MachinePeaks | None:
    """The cached peaks for ``key`` (default: this machine now), or ``None``."""
    key = key or peaks_key()
    path = Path(directory) / key_name(key)
    if not path.exists():
        return None
    try:
        peaks = MachinePeaks.model_validate_json(path.read_text())
    except ValueError:
        log.warning("ignoring unreadable %s; measuring again", path)
        return None
    return peaks if peaks.key == key else None


def machine_peaks(
    directory: Path,
    *,
    refresh: bool = False,
    measure: Callable[[dict[str, str]], MachinePeaks] = measure_peaks,
    key: dict[str, str] | None = None,
) -> MachinePeaks:
    """This machine's peaks: from the cache under its key, else measured once and cached.

    ``refresh`` measures again and replaces the entry; ``measure`` is the measurement (tests
    pass a fake); ``key`` defaults to :func:`peaks_key`.
    """
    key = key or peaks_key()
    if not refresh:
        cached = cached_peaks(directory, key)
        if cached is not None:
            return cached
    peaks = measure(key)
    if peaks.key != key:
        peaks = peaks.model_copy(update={"key": key})
    path = Path(directory) / key_name(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(peaks.model_dump_json(indent=1))
    tmp.replace(path)
    log.info("measured machine peaks: %s", peaks)
    return peaks
