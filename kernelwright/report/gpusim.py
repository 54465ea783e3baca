"""Renderings for the GPU simulator: a traced workload, simulated cycles per kernel."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from kernelwright.tools.gpusim.workloads.tracing import TraceSummary


def print_trace(console: Console, summary: TraceSummary) -> None:
    """One line about a traced workload, and the command that simulates it."""
    console.print(
        f"{summary.workload}: {summary.launches} launches, max error vs numpy "
        f"{summary.max_error:.2g}, traced in {summary.seconds:.1f}s -> {summary.out} "
        f"({summary.files} kernel files, {summary.bytes / 1e6:.1f} MB)"
    )
    console.print(f"next: kernelwright simulate {summary.out} --gpu ampere")


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
