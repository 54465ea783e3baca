"""Trace a named workload: run it on the PTX emulator and write an Accel-Sim v5 trace directory.

What ``kernelwright trace`` does; :mod:`kernelwright.report.gpusim` prints the summary.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kernelwright.config import Settings


@dataclass(frozen=True)
class TraceSummary:
    """What one traced run produced: launches, its error against numpy, the files written."""

    workload: str
    out: Path
    launches: int
    max_error: float
    seconds: float
    files: int
    bytes: int


def trace_workload(
    workload: str, out: Path, settings: Settings, params: dict[str, Any], cta_every: int = 1
) -> TraceSummary:
    """Run ``workload`` with ``params``, tracing every ``cta_every``-th CTA into ``out``."""
    from kernelwright.tools.gpusim import TraceSampling
    from kernelwright.tools.gpusim.traces import TraceDirWriter
    from kernelwright.tools.gpusim.workloads import get_workload

    sampling = TraceSampling(cta_every=cta_every) if cta_every > 1 else None
    start = time.perf_counter()
    with TraceDirWriter(out, sampling=sampling) as writer:
        run = get_workload(workload, settings=settings).run(
            sink=writer, sampling=sampling, **params
        )
    seconds = time.perf_counter() - start
    files = list(Path(out).glob("kernel-*.traceg*"))
    return TraceSummary(
        workload=workload,
        out=Path(out),
        launches=len(run.launches),
        max_error=run.max_error,
        seconds=seconds,
        files=len(files),
        bytes=sum(f.stat().st_size for f in files),
    )
