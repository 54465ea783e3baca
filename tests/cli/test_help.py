"""`--help` of every command: defaults shown, choices listed, no `<bool>` placeholders."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app

runner = CliRunner()
COMMANDS = ["optimize", "resume", "runs", "show", "demo", "campaign", "chat", "doctor", "eval",
            "trace", "simulate", "sample", "app", "mcp", "report"]  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_no_bool_placeholder(command):
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.output


@pytest.mark.parametrize(("command", "shown"), [
    ("optimize", ["sycl|cpp|cuda", "[default: (24)]", "OPENAI_API_KEY"]),
    ("eval", ["sycl|cpp|cuda"]),
    ("campaign", ["[default: 2;", "sycl|cpp|cuda"]),
    ("trace", ["bfs|lud|gaussian", "pythia"]),
    ("simulate", ["rtx2080ti|rtx3080ti", "[default: rtx2080ti]"]),
    ("sample", ["gcl|pka|sieve|stem|photon|random", "[default: rtx2080ti]"]),
    ("app", ["[default: rtx2080ti]", "[default: 0.8]", "sycl|cpp|cuda"]),
    ("demo", ["[default: 12;"]),
    ("mcp", ["stdio|http", "[default: 8765]"]),
])  # fmt: skip
def test_help_lists_choices_and_defaults(command, shown):
    out = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"}).output
    for text in shown:
        assert text in out, out
