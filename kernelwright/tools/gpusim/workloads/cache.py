"""Trace a workload once and keep the Accel-Sim trace folder on disk, keyed by what made it.

The key is a SHA-256 over the workload name, its parameters (defaults filled in), the seed, the
trace sampling, the text of the workload's CUDA source and Python launch sequence, and the
emulator's sources (:func:`gpusim_source_digest`), so a change to any of them traces again.
Folders live under ``<cache_dir>/workload-traces/<name>-<key>/``
with ``kernel-N.traceg.xz`` files, ``kernelslist.g`` and ``workload.json`` (parameters, launch
count, emulation seconds, max error against numpy). A folder is written under a temporary name and
renamed when complete, so an interrupted run never leaves a half trace behind.

Example:
    >>> path = traced_workload("cfd", {"iterations": 3})  # doctest: +SKIP
    >>> (path / "kernelslist.g").exists()  # doctest: +SKIP
    True
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import os
import shutil
import uuid
from dataclasses import asdict
from importlib import resources
from pathlib import Path
from typing import Any

from kernelwright.config import Settings
from kernelwright.tools.gpusim._trace import TraceSampling
from kernelwright.tools.gpusim.traces import TraceDirWriter
from kernelwright.tools.gpusim.workloads._registry import get_workload
from kernelwright.tools.gpusim.workloads.base import Workload

log = logging.getLogger(__name__)
CACHE_VERSION = 1
META_FILE = "workload.json"


def gpusim_source_digest() -> str:
    """SHA-256 over the emulator / trace / timing-model sources (``tools/gpusim/*.py``).

    Part of every cache key built on gpusim output, so a change to the emulator or the timing
    model re-traces and re-simulates instead of serving stale results.
    """
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for path in sorted(root.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:20]


def trace_key(workload: Workload, params: dict[str, Any], sampling: TraceSampling) -> str:
    """Hex digest identifying a trace of ``workload`` run with ``params`` under ``sampling``."""
    cuda = resources.files(__package__).joinpath(workload.source).read_text()
    host = inspect.getsource(inspect.getmodule(type(workload)))
    blob = json.dumps({"v": CACHE_VERSION, "name": workload.name, "params": params,
                       "seed": workload.seed, "sampling": asdict(sampling), "cuda": cuda,
                       "host": host, "gpusim": gpusim_source_digest()}, sort_keys=True,
                      default=str)  # fmt: skip
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def traced_workload(name: str, params: dict[str, Any] | None = None,
                    sampling: TraceSampling | None = None, *, seed: int = 0,
                    settings: Settings | None = None) -> Path:  # fmt: skip
    """The trace folder of workload ``name`` with ``params``, tracing it on first use.

    Args:
        name: a registry name (``"3mm"`` and ``"mm3"`` are the same workload).
        params: parameter overrides (unknown names raise ``ValueError``).
        sampling: which CTAs/warps to trace (default: every warp).
        seed: input seed of the workload.
        settings: where the cache lives (``settings.cache_dir``).
    """
    settings = settings or Settings()
    sampling = sampling or TraceSampling()
    workload = get_workload(name, seed=seed, settings=settings)
    full = workload.params(**(params or {}))
    key = trace_key(workload, full, sampling)
    root = Path(settings.cache_dir) / "workload-traces"
    final = root / f"{workload.name}-{key}"
    if _complete(final):
        return final
    # a private partial folder per process: concurrent callers never delete each other's work
    tmp = root / f".{workload.name}-{key}.{os.getpid()}.{uuid.uuid4().hex[:8]}.partial"
    tmp.mkdir(parents=True)
    with TraceDirWriter(tmp, sampling=sampling, xz=True) as writer:
        run = workload.run(sink=writer, sampling=sampling, **full)
    meta = {"workload": workload.name, "params": full, "seed": seed,
            "sampling": asdict(sampling), "launches": run.n_launches,
            "emulation_seconds": round(run.seconds, 3), "max_error": run.max_error}  # fmt: skip
    (tmp / META_FILE).write_text(json.dumps(meta, indent=1, default=str))
    if _complete(final):  # another process finished first: keep its folder
        shutil.rmtree(tmp, ignore_errors=True)
        return final
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    log.info("traced %s: %d launches in %.1f s -> %s", name, run.n_launches, run.seconds, final)
    return final


def _complete(folder: Path) -> bool:
    """A finished trace folder: its listing and metadata exist."""
    return (folder / META_FILE).is_file() and (folder / "kernelslist.g").is_file()


def workload_meta(trace_dir: str | Path) -> dict[str, Any] | None:
    """The ``workload.json`` of a cached trace folder, or None for other folders."""
    path = Path(trace_dir) / META_FILE
    return json.loads(path.read_text()) if path.is_file() else None
