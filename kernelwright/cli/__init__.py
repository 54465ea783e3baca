"""The command line: parse, call the API, render with rich. No logic of its own.

One module per group of commands; importing it registers its commands on ``app``.
"""

from kernelwright.cli import (  # noqa: F401  (registers the commands)
    application,
    campaign,
    chat,
    doctor,
    evaluate,
    gpusim,
    mcp,
    peaks,
    report,
    runs,
    sample,
    worker,
)
from kernelwright.cli._app import app

__all__ = ["app"]
