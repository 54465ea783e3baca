"""`sample`: representative kernel invocations of a trace folder, their weights, the total."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.table import Table
from rich.text import Text

from kernelwright.cli._app import (
    DEFAULT_GPU,
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

Method = Literal["gcl", "pka", "sieve", "stem", "photon", "random"]
METHODS = ("gcl", "pka", "sieve", "stem", "photon", "random")
SEEDED = ("gcl", "pka", "stem", "random")  # Sieve and Photon are deterministic


@app.command()
def sample(
    trace_dir: Path,
    method: Annotated[Method, typer.Option(help="sampler", case_sensitive=False)] = "gcl",
    out: Annotated[Path | None, typer.Option(help="write a reduced trace folder here")] = None,
    gpu: GpuOpt = DEFAULT_GPU,
    seed: Annotated[int, typer.Option(help="seed of the sampler")] = 0,
    json_out: JsonOpt = False,
) -> None:
    """Pick representative kernel invocations, simulate only them, project the whole workload."""
    from kernelwright.tools.sampler import sample_trace_dir

    check_gpu(gpu)
    check_trace_dir(trace_dir)
    if out is not None and out.exists() and not out.is_dir():
        _fail(FileExistsError(f"--out {out} is a file: pass a directory for the reduced trace"))
    try:
        seeded = {"seed": seed} if method in SEEDED else {}
        report = sample_trace_dir(
            trace_dir, method, gpu=gpu, out=out, settings=_settings(), **seeded
        )
    except (KernelwrightError, ValueError, OSError) as exc:
        _fail(exc)
    if json_out:
        print(json.dumps(report.as_dict()))
        return
    n = len(report.representatives)
    title = f"{report.workload}: {report.method}, {n} of {report.invocations} invocations"
    table = Table(title=Text(title))
    for col in ("invocation", "kernel id", "kernel", "weight", "cycles"):
        table.add_column(col, justify="left" if col == "kernel" else "right")
    for r in report.representatives:
        table.add_row(str(r.invocation), str(r.kernel_id), Text(r.name), f"{r.weight:g}",
                      f"{r.cycles:,.0f}")  # fmt: skip
    console.print(table)
    console.print(f"projected whole-workload time on {report.gpu}: "
                  f"{report.projected_cycles:,.0f} cycles ({report.projected_us:,.1f} us, "
                  "versus the reference model)", markup=False)  # fmt: skip
    if report.reduced_dir:
        console.print(f"reduced trace folder: {report.reduced_dir}", markup=False)
