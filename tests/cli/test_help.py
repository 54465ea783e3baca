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


def test_the_docs_launch_counts_are_the_suites():
    """docs/SAMPLING.md's lud row against the suite's size and the workload's launch count."""
    import re
    from pathlib import Path

    from kernelwright.tools.gpusim.workloads import SAMPLING_SUITE
    from kernelwright.tools.gpusim.workloads.lud import LudWorkload

    docs = (Path(__file__).resolve().parents[2] / "docs" / "SAMPLING.md").read_text()
    size, launches = map(int, re.search(r"\| lud \| N = (\d+) \| (\d+) \|", docs).groups())
    (entry,) = [e for e in SAMPLING_SUITE if e.name == "lud"]
    assert entry.params["size"] == size
    assert launches == 3 * (size // 16 - 1) + 1
    default = LudWorkload.defaults["size"]
    assert f"(lud: N = {default}, {3 * (default // 16 - 1) + 1} launches" in docs
