"""Python API: sample a trace folder, simulate only the representatives, project the total.

Example:
    >>> report = sample_trace_dir("traces/cfd", method="gcl")  # doctest: +SKIP
    >>> report.projected_cycles, [(r.invocation, r.weight) for r in report.representatives]
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kernelwright.config import Settings
from kernelwright.tools.gpusim.gpus import GPUConfig, gpu_by_name
from kernelwright.tools.gpusim.timing import simulate_kernel
from kernelwright.tools.gpusim.traces import InMemoryKernel, iter_kernels
from kernelwright.tools.sampler.base import Selection
from kernelwright.tools.sampler.invocations import WorkloadTraces, scan_trace_dir
from kernelwright.tools.sampler.reduce import write_reduced_trace
from kernelwright.tools.sampler.registry import get_sampler


@dataclass(frozen=True)
class Representative:
    """One simulated representative and what it stands for."""

    invocation: int
    kernel_id: int
    name: str
    weight: float
    cycles: float


@dataclass
class SampleReport:
    """The outcome of sampling one trace folder."""

    workload: str
    method: str
    gpu: str
    invocations: int
    representatives: list[Representative]
    projected_cycles: float
    projected_us: float
    seconds: float
    reduced_dir: str | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def time_shares(self) -> dict[str, float]:
        """Share of the projected whole-workload time per kernel name (sums to 1)."""
        shares: dict[str, float] = {}
        for r in self.representatives:
            shares[r.name] = shares.get(r.name, 0.0) + r.weight * r.cycles
        total = sum(shares.values()) or 1.0
        return {k: v / total for k, v in sorted(shares.items(), key=lambda kv: -kv[1])}


def simulate_representatives(trace_dir: str | Path, selection: Selection,
                             gpu: GPUConfig) -> dict[int, float]:  # fmt: skip
    """Reference-model cycles of the selected invocations only (the point of sampling)."""
    wanted = set(selection.indices)
    out: dict[int, float] = {}
    for index, kernel in enumerate(iter_kernels(trace_dir)):
        if index in wanted:
            out[index] = float(simulate_kernel(InMemoryKernel(kernel.info,
                                                              list(kernel.warps())), gpu).cycles)
        if len(out) == len(wanted):
            break
    return out


def sample_trace_dir(trace_dir: str | Path, method: str = "gcl", *, gpu: str = "rtx2080ti",
                     out: str | Path | None = None, settings: Settings | None = None,
                     traces: WorkloadTraces | None = None,
                     **options: Any) -> SampleReport:  # fmt: skip
    """Choose representatives with ``method``, simulate them on ``gpu``, project the total.

    Args:
        trace_dir: an Accel-Sim trace folder (kernelslist.g + kernel files).
        method: ``gcl``, ``pka``, ``sieve``, ``stem``, ``photon`` or ``random``.
        out: if given, write a reduced trace folder there (see :mod:`.reduce`).
        traces: an already scanned folder (skips the scan).
        options: constructor arguments of the sampler (e.g. ``seed``, ``k_rule``).
    """
    t0 = time.perf_counter()
    cfg = gpu_by_name(gpu)
    traces = traces or scan_trace_dir(trace_dir, settings=settings)
    selection = get_sampler(method, **options).select(traces)
    cycles = simulate_representatives(trace_dir, selection, cfg)
    reps = [Representative(s.index, traces.invocations[s.index].kernel_id,
                           traces.invocations[s.index].name, s.weight, cycles[s.index])
            for s in selection.samples]  # fmt: skip
    projected = selection.projected([cycles.get(i, 0.0) for i in range(len(traces))])
    reduced = str(write_reduced_trace(trace_dir, selection, out)) if out else None
    info = {k: v for k, v in selection.info.items() if isinstance(v, int | float | str)}
    return SampleReport(traces.name, method, cfg.name, len(traces), reps, projected,
                        projected / cfg.clock_mhz, time.perf_counter() - t0, reduced, info)
