"""`eval`: one candidate against one task."""

from __future__ import annotations

from pathlib import Path

import typer

from kernelwright.cli._app import (
    BackendOpt,
    JsonOpt,
    _fail,
    _settings,
    app,
    console,
    print_json,
)
from kernelwright.cli.doctor import warn_weak_sandbox
from kernelwright.errors import KernelwrightError


@app.command("eval")
def eval_cmd(
    task: Path,
    candidate: Path,
    backend: BackendOpt = None,
    json_out: JsonOpt = False,
    compile_: bool = typer.Option(
        False, "--compile", help="also time torch.compile of the reference (same inputs, clock)"
    ),
):
    """Verify a candidate module against a task and time it against PyTorch eager."""
    import kernelwright
    from kernelwright.report.console import print_eval
    from kernelwright.spec import Candidate

    try:
        chosen = Candidate.from_file(candidate, backend)  # a contradicting --backend fails now
        result = kernelwright.evaluate(kernelwright.load_task(task), chosen,
                                       _settings(time_compile=True) if compile_ else _settings())
    except KernelwrightError as exc:
        _fail(exc)
    summary = result.summary()
    warn_weak_sandbox(result.flags, result.observations.get("weak_sandbox", {}).get("reasons"))
    if json_out:
        print_json(summary)
    else:
        print_eval(console, summary)
    raise typer.Exit(0 if result.correct else 1)
