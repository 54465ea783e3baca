"""The typer app, the consoles, and the options every command shares."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from kernelwright.config import Settings

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="kernelwright: agents that make GPU kernels faster, with honest numbers.",
)
console = Console()
err_console = Console(stderr=True)

BackendOpt = Annotated[str | None, typer.Option("--backend", help="sycl | cpp | cuda")]


def _check_spaces(value: str | None) -> str | None:
    """``--spaces``: one line naming the choices on a bad value (typer prints it, exit 2)."""
    if value is None:
        return None
    from kernelwright.spec.contract import parse_spaces

    try:
        return ",".join(s.value for s in parse_spaces(value))
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


SpacesOpt = Annotated[str | None, typer.Option(
    "--spaces", callback=_check_spaces,
    help="implementation spaces: all (default), custom, vendor, framework, or a comma list; "
    "narrows what the task allows")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print one JSON object")]
StoreOpt = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help="run store: a DIRECTORY (created if missing) holding runs/ and the checkpoints; "
        "default: the data dir",
    ),
]


def _settings(**overrides) -> Settings:
    return Settings(**{k: v for k, v in overrides.items() if v is not None})


def _fail(exc: Exception) -> None:
    """Print ``exc`` as plain text (it may carry paths or untrusted text) and exit with 2.

    Never markup (a message may contain ``[...]``) and never hard-wrapped (a user copies paths).
    """
    err_console.print(Text("error: ", style="red") + Text(str(exc)), soft_wrap=True)
    raise typer.Exit(2)


def finite(value):
    """``value`` with every NaN or infinite float replaced by ``None`` (JSON has neither)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def print_json(value) -> None:
    """Print one JSON document that strict parsers accept (never ``NaN``/``Infinity``)."""
    print(json.dumps(finite(value), allow_nan=False))


@app.callback()
def main(verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
