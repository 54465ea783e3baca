"""`trace` and `simulate`: CUDA workloads on the PTX emulator and the reference timing model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from kernelwright.cli._app import (
    DEFAULT_GPU,
    WORKLOADS,
    GpuOpt,
    JsonOpt,
    _fail,
    _settings,
    app,
    check_gpu,
    check_trace_dir,
    console,
)
from kernelwright.errors import KernelwrightError


@app.command()
def trace(
    workload: Annotated[str, typer.Argument(help="one of " + "|".join(WORKLOADS))],
    out: Annotated[Path, typer.Option("--out", help="trace directory to write")],
    size: Annotated[
        list[str] | None, typer.Option("--size", help="workload parameter NAME=VALUE (repeat)")
    ] = None,
    cta_every: Annotated[int, typer.Option(help="trace every k-th CTA (bounds the size)",
                                           min=1)] = 1,
) -> None:
    """Run a CUDA workload on the PTX emulator and write an Accel-Sim v5 trace directory."""
    if workload.strip().lower() not in WORKLOADS:
        _fail(ValueError(f"unknown workload {workload!r}: choose one of {', '.join(WORKLOADS)}"))
    if out.exists() and not out.is_dir():
        _fail(FileExistsError(f"--out {out} is a file: pass a directory for the trace"))
    try:
        params = _parse_params(size or [])
    except typer.BadParameter as exc:
        _fail(exc)
    from kernelwright.report.gpusim import print_trace
    from kernelwright.tools.gpusim.workloads.tracing import trace_workload

    try:
        summary = trace_workload(workload, out, _settings(), params, cta_every)
    except (KernelwrightError, ValueError) as exc:
        _fail(exc)
    print_trace(console, summary)


@app.command()
def simulate(
    trace_dir: Path,
    gpu: GpuOpt = DEFAULT_GPU,
    json_out: JsonOpt = False,
) -> None:
    """Per-kernel and total cycles of a trace directory on the reference timing model."""
    check_gpu(gpu)
    check_trace_dir(trace_dir)
    from kernelwright.report.gpusim import print_simulation
    from kernelwright.tools.gpusim.timing import simulate_trace_dir

    try:
        timings = simulate_trace_dir(trace_dir, gpu)
    except (KernelwrightError, ValueError) as exc:
        _fail(exc)
    if json_out:
        total = sum(t.cycles for t in timings)
        kernels = [t.model_dump() for t in timings]
        print(json.dumps({"gpu": gpu, "total_cycles": total, "kernels": kernels}))
    else:
        print_simulation(console, timings)


def _parse_params(pairs: list[str]) -> dict[str, int | float | str]:
    params: dict[str, int | float | str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise typer.BadParameter(
                f"--size expects NAME=VALUE, got {pair!r} (e.g. --size n=256)"
            )
        for cast in (int, float):
            try:
                params[name] = cast(value)
                break
            except ValueError:
                continue
        else:
            params[name] = value
    return params
