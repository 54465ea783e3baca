"""CLI renderings for the GPU simulator: tracing a workload, simulated cycles per kernel."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from kernelwright.config import Settings


def run_trace(
    console: Console,
    workload: str,
    out: Path,
    params: dict[str, Any],
    cta_every: int,
    settings: Settings,
) -> None:
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
    size = sum(f.stat().st_size for f in files)
    console.print(
        f"{workload}: {len(run.launches)} launches, max error vs numpy "
        f"{run.max_error:.2g}, traced in {seconds:.1f}s -> {out} "
        f"({len(files)} kernel files, {size / 1e6:.1f} MB)"
    )
    console.print(f"next: kernelwright simulate {out} --gpu ampere")


def print_simulation(console: Console, timings: list[Any]) -> None:
    table = Table(
        "id",
        "kernel",
        "grid CTAs",
        "cycles",
        "time (us)",
        "IPC",
        "occupancy",
        "L2 hit",
        title=f"reference timing model ({timings[0].gpu if timings else '-'})",
    )
    for t in timings:
        l2 = f"{t.l2_hit_rate:.0%}" if t.l2_hit_rate is not None else "-"
        table.add_row(
            str(t.kernel_id),
            t.name[:40],
            str(t.grid_ctas),
            f"{t.cycles:,}",
            f"{t.time_us:.1f}",
            f"{t.ipc:.2f}",
            f"{t.occupancy.warps_per_sm}",
            l2,
        )
    console.print(table)
    total = sum(t.cycles for t in timings)
    console.print(
        f"total: {total:,} cycles over {len(timings)} kernels (versus the reference "
        "model, not a measured GPU)"
    )
