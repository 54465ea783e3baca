"""`sample`: representative kernel invocations of a trace folder, their weights, the total."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from kernelwright.cli._app import JsonOpt, _fail, _settings, app, console
from kernelwright.errors import KernelwrightError

METHODS = ("gcl", "pka", "sieve", "stem", "photon", "random")
SEEDED = ("gcl", "pka", "stem", "random")  # Sieve and Photon are deterministic


@app.command()
def sample(
    trace_dir: Path,
    method: Annotated[str, typer.Option(help="gcl|pka|sieve|stem|photon|random")] = "gcl",
    out: Annotated[Path | None, typer.Option(help="write a reduced trace folder here")] = None,
    gpu: Annotated[str, typer.Option(help="GPU of the reference timing model")] = "rtx2080ti",
    seed: Annotated[int, typer.Option(help="seed of the sampler")] = 0,
    json_out: JsonOpt = False,
) -> None:
    """Pick representative kernel invocations, simulate only them, project the whole workload."""
    from kernelwright.tools.sampler import sample_trace_dir

    if method not in METHODS:
        _fail(ValueError(f"unknown method {method!r}; choose from {', '.join(METHODS)}"))
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
