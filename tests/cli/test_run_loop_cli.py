"""`optimize` exits non-zero without a correct kernel and its JSON says why."""

from __future__ import annotations

import json

from typer.testing import CliRunner

import kernelwright
from kernelwright.cli import app
from kernelwright.graphs.runner import RunReport


def _report(correct: bool) -> RunReport:
    return RunReport(
        run_id="r",
        task="t",
        status="done",
        correct=correct,
        best_speedup=1.5 if correct else None,
        speedup_low=None,
        speedup_high=None,
        evaluations=3,
        roofline_fraction=None,
        kernel_path=None,
        best_candidate=None,
        store="/tmp/s",
        reason="budget spent" if correct else "no correct kernel in 3 evaluations [bold]x[/]",
    )


def _task(tmp_path) -> str:
    """A task file that exists (optimize checks the path before any work; the run is faked)."""
    path = tmp_path / "t.py"
    path.write_text("# stands in for a task: kernelwright.optimize is replaced\n")
    return str(path)


def test_no_correct_kernel_exits_1_with_reason_in_json(monkeypatch, tmp_path):
    monkeypatch.setattr(kernelwright, "optimize", lambda *a, **k: _report(False))
    result = CliRunner().invoke(app, ["optimize", _task(tmp_path), "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["reason"].startswith("no correct kernel in 3 evaluations")


def test_no_correct_kernel_prints_the_reason_as_plain_text(monkeypatch, tmp_path):
    monkeypatch.setattr(kernelwright, "optimize", lambda *a, **k: _report(False))
    result = CliRunner().invoke(app, ["optimize", _task(tmp_path)])
    assert result.exit_code == 1
    assert "[bold]x[/]" in result.stdout  # untrusted text is never markup


def test_a_correct_kernel_exits_0(monkeypatch, tmp_path):
    monkeypatch.setattr(kernelwright, "optimize", lambda *a, **k: _report(True))
    result = CliRunner().invoke(app, ["optimize", _task(tmp_path), "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["correct"]


def test_store_help_says_directory():
    result = CliRunner().invoke(app, ["optimize", "--help"], env={"COLUMNS": "200"})
    assert "DIRECTORY" in result.stdout
