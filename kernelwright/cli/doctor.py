"""`doctor`: what works on this machine (backends, the candidate sandbox) and how to fix the rest.

Also the one loud warning a command prints when candidates ran without the sandbox.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict

import typer
from rich.table import Table
from rich.text import Text

from kernelwright.cli._app import JsonOpt, _settings, app, console, err_console, print_json

_warned: list[bool] = []  # per process: the warning is printed once


def warn_weak_sandbox(flags: Iterable[str], reasons: object = None) -> None:
    """Print, once per command, why the candidate sandbox was weak and how to fix it
    (``reasons``: the result's ``observations["weak_sandbox"]["reasons"]``; none means no
    bubblewrap)."""
    from kernelwright.spec.result import Flag
    from kernelwright.tools.evaluate.sandbox import INSTALL_HINT

    if Flag.WEAK_SANDBOX not in set(flags) or _warned:
        return
    _warned.append(True)
    listed = [str(r) for r in reasons] if isinstance(reasons, list) else []
    if listed and not any(r.startswith("no bubblewrap") for r in listed):
        err_console.print(Text("WARNING: WEAK SANDBOX. " + "; ".join(listed) + ". Run "
                               "`kernelwright doctor` to check.", style="bold red"),
                          soft_wrap=True)
        return
    err_console.print(Text(
        "WARNING: WEAK SANDBOX. Candidate code ran WITHOUT bubblewrap: it could read your "
        "files and secrets, use the network and tamper with caches. Fix: " + INSTALL_HINT
        + ". Run `kernelwright doctor` to check.", style="bold red"), soft_wrap=True)


@app.command()
def doctor(json_out: JsonOpt = False) -> None:
    """List every backend and the candidate sandbox, whether each works here, and the fix.

    The candidate runner is started once, exactly as an evaluation starts it; when it cannot
    start, nothing can be evaluated here and the exit code is 1.
    """
    from kernelwright.report.console import status_table
    from kernelwright.tools.backends.doctor import doctor as probe
    from kernelwright.tools.evaluate.sandbox import INSTALL_HINT, probe_bwrap
    from kernelwright.tools.evaluate.self_check import probe_runner

    settings = _settings()
    statuses = probe(settings)
    box = probe_bwrap()
    started = probe_runner(settings, box.path if box.available else None)
    if json_out:
        print_json({"backends": [s.model_dump() | {"usable": s.usable} for s in statuses],
                    "sandbox": {"available": box.available, "bwrap": box.path,
                                "detail": box.detail,
                                "fix": None if box.available else INSTALL_HINT},
                    "runner": asdict(started)})
    else:
        console.print(status_table(statuses))
        table = Table("sandbox", "works", "detail", "fix")
        table.add_row("bubblewrap", "yes" if box.available else "NO", Text(box.detail),
                      Text("" if box.available else INSTALL_HINT))
        table.add_row("candidate runner", "yes" if started.works else "NO",
                      Text(started.detail), Text(started.fix or ""))
        console.print(table)
    if not started.works:
        raise typer.Exit(1)
