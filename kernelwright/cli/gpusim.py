"""`trace` and `simulate`: CUDA workloads on the PTX emulator and the reference timing model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from kernelwright.cli._app import (
    JsonOpt,
    _fail,
    _settings,
    app,
    console,
)
from kernelwright.errors import KernelwrightError


@app.command()
def trace(
    workload: str,
    out: Annotated[Path, typer.Option("--out", help="trace directory to write")],
    size: Annotated[
        list[str] | None, typer.Option("--size", help="workload parameter NAME=VALUE (repeat)")
    ] = None,
    cta_every: Annotated[int, typer.Option(help="trace every k-th CTA (bounds the size)")] = 1,
) -> None:
    """Run a CUDA workload on the PTX emulator and write an Accel-Sim v5 trace directory."""
    from kernelwright.report.gpusim import print_trace
    from kernelwright.tools.gpusim.workloads.tracing import trace_workload

    try:
        summary = trace_workload(workload, out, _settings(), _parse_params(size or []), cta_every)
    except (KernelwrightError, ValueError) as exc:
        _fail(exc)
    print_trace(console, summary)


@app.command()
def simulate(
    trace_dir: Path,
    gpu: Annotated[
        str, typer.Option(help="turing | ampere | ada | hopper | a100 | ...")
    ] = "ampere",
    json_out: JsonOpt = False,
) -> None:
    """Per-kernel and total cycles of a trace directory on the reference timing model."""
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
