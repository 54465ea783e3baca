"""`eval` and `doctor`: one candidate against one task; what works on this machine."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from kernelwright.cli._app import (
    BackendOpt,
    JsonOpt,
    _fail,
    _settings,
    app,
    console,
)
from kernelwright.errors import KernelwrightError


@app.command("eval")
def eval_cmd(task: Path, candidate: Path, backend: BackendOpt = None, json_out: JsonOpt = False):
    """Verify a candidate module against a task and time it against PyTorch eager."""
    import kernelwright
    from kernelwright.report.console import print_eval
    from kernelwright.spec import Candidate

    try:
        result = kernelwright.evaluate(
            kernelwright.load_task(task), Candidate.from_file(candidate, backend), _settings()
        )
    except KernelwrightError as exc:
        _fail(exc)
    summary = result.summary()
    if json_out:
        print(json.dumps(summary))
    else:
        print_eval(console, summary)
    raise typer.Exit(0 if result.correct else 1)


@app.command()
def doctor(json_out: JsonOpt = False) -> None:
    """List every backend, whether it works here, and the fix for anything missing."""
    from kernelwright.report.console import status_table
    from kernelwright.tools.backends.doctor import doctor as probe

    statuses = probe(_settings())
    if json_out:
        print(json.dumps([s.model_dump() | {"usable": s.usable} for s in statuses]))
    else:
        console.print(status_table(statuses))
