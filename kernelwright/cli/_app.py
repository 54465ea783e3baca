"""The typer app, the consoles, and the options every command shares.

A user's mistake (an unknown choice, a bad number, a missing file) ends the command with ONE
line on stderr naming the problem and the fix, before any work starts: click's usage errors
and pydantic's validation errors are both turned into that line here.
"""

from __future__ import annotations

import json
import logging
import math
import sys
from pathlib import Path
from typing import Annotated, Any, Literal, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from kernelwright.config import Settings

# typer vendors click; its error classes are reached through the one it exports.
_ClickError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


class _App(typer.Typer):
    """A Typer app whose usage errors are one plain line (``error: ... ; fix``) on stderr."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            code = super().__call__(*args, **kwargs)
        except _ClickError as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # `kernelwright` alone: the help
                typer.echo(exc.ctx.get_help() if exc.ctx else "", err=True)
                sys.exit(2)
            err_console.print(Text("error: ", style="red") + Text(usage_error_line(exc)),
                              soft_wrap=True)  # fmt: skip
            sys.exit(exc.exit_code)
        except typer.Abort:
            err_console.print("aborted", style="red")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def usage_error_line(exc: Exception) -> str:
    """Click's message on one line, with where to read the right usage."""
    message = " ".join(exc.format_message().replace("Value error, ", "").split())
    ctx = getattr(exc, "ctx", None)
    where = "kernelwright --help"
    if ctx is not None and ctx.parent is not None:
        where = f"kernelwright {ctx.info_name} --help"
    return f"{message} (see `{where}`)"


app = _App(
    rich_markup_mode=None,
    add_completion=False,
    no_args_is_help=True,
    context_settings={"show_default": True},
    help="kernelwright: agents that make GPU kernels faster, with honest numbers.",
)
console = Console()
err_console = Console(stderr=True)

Backend = Literal["sycl", "cpp", "cuda"]  # config.BACKENDS, spelled out for typer
BackendOpt = Annotated[
    Backend | None,
    typer.Option(
        "--backend",
        case_sensitive=False,
        show_default="sycl, or $KERNELWRIGHT_BACKEND",
        help="kernel backend (any case)",
    ),
]
BudgetOpt = Annotated[
    int | None,
    typer.Option(help="candidate evaluations (at least 1)", show_default="24"),
]


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
    str | None,
    typer.Option(
        "--store",
        help="run store: a DIRECTORY (created if missing) holding runs/ and the checkpoints, "
        "or a postgresql://user@host:port/db URL (tables, checkpoints and Optuna studies there)",
        show_default="the data dir, $XDG_DATA_HOME/kernelwright",
    ),
]
ClusterOpt = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        help="evaluate on Ray workers: ray://HEAD:10001, HEAD:6379 or auto (see `kernelwright "
        "worker`); also $KERNELWRIGHT_CLUSTER",
        show_default="in this process",
    ),
]

# The reference timing model's GPUs and the traceable workloads, spelled out so `--help` lists
# them without importing the emulator (tests/cli check them against the registries).
GPUS = ("rtx2080ti", "rtx3080ti", "a100", "rtx4090", "h100", "turing", "ampere", "ada", "hopper")
DEFAULT_GPU = "rtx2080ti"  # one default for simulate, sample and app: their cycles compare
WORKLOADS = ("bfs", "lud", "gaussian", "3mm", "mm3", "cfd", "srad", "phi2", "qwen15", "pythia")
GpuOpt = Annotated[str, typer.Option(help="GPU of the reference timing model: " + "|".join(GPUS))]


def check_gpu(gpu: str) -> None:
    """End the command with one line unless ``gpu`` names a GPU of the timing model."""
    key = gpu.strip().lower().replace("-", "").replace("_", "").replace(" ", "")
    if key not in GPUS:
        _fail(ValueError(f"--gpu {gpu!r} is not known: choose one of {', '.join(GPUS)}"))


# Settings fields and the flag that sets each, for error messages.
FLAGS = {"backend": "--backend", "budget": "--budget", "time_limit_s": "--time-limit",
         "max_tokens": "--max-tokens", "max_cost": "--max-cost", "timeout_s": "--llm-timeout",
         "max_retries": "--llm-max-retries", "max_requests": "--max-llm-requests",
         "base_url": "--llm-base-url", "model": "--llm-model",
         "api_key_env": "--llm-api-key-env"}  # fmt: skip


def validation_line(exc: Exception, given: dict[str, Any] | None = None,
                    env: str = "KERNELWRIGHT_") -> str:  # fmt: skip
    """A pydantic ``ValidationError`` as one line: the flag (or env var), the value, the rule."""
    errors = exc.errors() if hasattr(exc, "errors") else []
    if not errors:
        return " ".join(str(exc).split())
    parts = []
    for err in errors:
        field = str(err["loc"][-1]) if err.get("loc") else "value"
        name = FLAGS.get(field, f"--{field.replace('_', '-')}")
        if given is not None and field not in given and field in FLAGS:
            name = f"{name} (or ${env}{field.upper()})"
        elif given is not None and field not in given:
            name = f"${env}{field.upper()}"
        rule = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"{name} {err.get('input')!r} is not valid: {rule[:1].lower() + rule[1:]}")
    return "; ".join(parts) + " (fix the value; `kernelwright COMMAND --help` lists defaults)"


def _settings(**overrides) -> Settings:
    """Settings from the flags given (``None`` = not given); a bad value ends the command
    with one line naming the flag, the value and the rule."""
    from pydantic import ValidationError

    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**given)
    except ValidationError as exc:
        _fail(ValueError(validation_line(exc, given)))


def llm_settings(**flags):
    """LLMSettings from the ``--llm-*``/budget flags given (``None`` = not given); a bad value
    ends the command with one line. The one place the CLI builds them."""
    from pydantic import ValidationError

    from kernelwright.config import LLMSettings

    given = {k: v for k, v in flags.items() if v is not None}
    try:
        return LLMSettings(**given)
    except ValidationError as exc:
        _fail(ValueError(validation_line(exc, given, env="KERNELWRIGHT_LLM_")))


def _fail(exc: Exception) -> NoReturn:
    """Print ``exc`` as one plain line (it may carry paths or untrusted text) and exit with 2.

    Never markup (a message may contain ``[...]``) and never hard-wrapped (a user copies paths).
    """
    message = " ".join(str(exc).split()) if "\n" not in str(exc).strip() else str(exc).strip()
    err_console.print(Text("error: ", style="red") + Text(message), soft_wrap=True)
    raise typer.Exit(2)


def check_file(path: Path, what: str, example: str) -> None:
    """End the command with one line unless ``path`` is a readable file."""
    if path.is_dir():
        _fail(FileNotFoundError(f"{what} {path} is a directory, not a file: pass one file, "
                                f"e.g. {example}"))  # fmt: skip
    if not path.is_file():
        _fail(FileNotFoundError(f"{what} {path} does not exist: pass an existing file, "
                                f"e.g. {example}"))  # fmt: skip


def check_trace_dir(path: Path) -> None:
    """End the command with one line unless ``path`` is a trace folder."""
    if not path.is_dir():
        what = "is a file" if path.exists() else "does not exist"
        _fail(FileNotFoundError(f"trace folder {path} {what}: pass the directory "
                                "`kernelwright trace WORKLOAD --out DIR` wrote"))  # fmt: skip


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
def main(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="log INFO")] = False):
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
