"""The command line, driven as a user would (typer's runner, real subcommands)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_doctor_lists_every_backend_with_a_verdict():
    result = runner.invoke(app, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    statuses = {s["name"]: s for s in report["backends"]}
    assert set(statuses) == {"sycl", "cpp", "cuda"}
    assert all(isinstance(s["usable"], bool) for s in statuses.values())
    box = report["sandbox"]
    assert isinstance(box["available"], bool) and (box["available"] or "bubblewrap" in box["fix"])
    started = report["runner"]  # started for real, in the sandbox doctor found
    assert started["works"] and started["fix"] is None, started
    assert started["sandboxed"] == box["available"]


def test_doctor_fails_when_the_candidate_runner_cannot_start(monkeypatch):
    # bwrap works, but the runner's interpreter is not where the sandbox looks (a moved or
    # half-installed environment): doctor must say so, with the fix, and exit 1
    missing = "/nonexistent/kw-venv/bin/python"
    monkeypatch.setattr("kernelwright.tools.evaluate.sandbox.interpreter", lambda: missing)
    result = runner.invoke(app, ["doctor", "--json"])
    assert result.exit_code == 1, result.output
    started = json.loads(result.output)["runner"]
    assert not started["works"]
    assert "did not start" in started["detail"]
    assert "make setup" in started["fix"] and missing in started["fix"]


@pytest.mark.requires_sycl
def test_doctor_shows_sycl_usable_and_cuda_compiles_without_device():
    report = json.loads(runner.invoke(app, ["doctor", "--json"]).output)
    statuses = {s["name"]: s for s in report["backends"]}
    assert statuses["sycl"]["usable"]
    assert statuses["cuda"]["can_compile"]


def test_broken_task_file_is_a_clear_error_and_exit_code_2(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def (:\n")
    cand = ROOT / "examples" / "candidates" / "l1_gelu_naive_sycl.py"
    result = runner.invoke(app, ["eval", str(bad), str(cand)])
    assert result.exit_code == 2
    assert "syntax error" in result.output and str(bad) in result.output


@pytest.mark.slow
def test_errors_are_not_wrapped_on_a_40_column_terminal(tmp_path):
    """A user copies the path out of the message: it must arrive on one line, unbroken."""
    bad = tmp_path / "a_directory_with_a_long_name" / "a_broken_task_file_with_a_long_name.py"
    bad.parent.mkdir()
    bad.write_text("def (:\n")
    cand = ROOT / "examples" / "candidates" / "l1_gelu_naive_sycl.py"
    env = {**os.environ, "COLUMNS": "40", "TERM": "xterm-256color"}
    proc = subprocess.run([sys.executable, "-m", "kernelwright.cli", "eval", str(bad), str(cand)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert len(str(bad)) > 40 and str(bad) in proc.stderr
    assert any(line.startswith("error: ") and str(bad) in line
               for line in proc.stderr.splitlines()), proc.stderr


def test_show_unknown_run_names_the_fix(tmp_path):
    result = runner.invoke(app, ["show", "nope", "--store", str(tmp_path)])
    assert result.exit_code == 2 and "kernelwright runs" in result.output


def test_runs_on_an_empty_store_is_an_empty_list(tmp_path):
    result = runner.invoke(app, ["runs", "--store", str(tmp_path), "--json"])
    assert result.exit_code == 0 and json.loads(result.output) == []


@pytest.mark.requires_sycl
@pytest.mark.slow
def test_eval_json_has_the_documented_fields():
    task = ROOT / "examples" / "tasks" / "l1_gelu.py"
    cand = ROOT / "examples" / "candidates" / "l1_gelu_naive_sycl.py"
    result = runner.invoke(app, ["eval", str(task), str(cand), "--json"])
    summary = json.loads(result.output.strip().splitlines()[-1])
    keys = ("correct", "level", "speedup", "speedup_low", "speedup_high", "max_error", "flags")
    for key in keys:
        assert key in summary
    assert summary["correct"] is True and summary["level"] == 5
    assert set(summary["max_error"]) >= {"nominal"} and len(summary["max_error"]) >= 3
    assert summary["speedup_low"] <= summary["speedup"] <= summary["speedup_high"]


@pytest.mark.requires_nvcc
def test_trace_then_simulate_a_workload(tmp_path):
    out = tmp_path / "trace"
    result = runner.invoke(app, ["trace", "gaussian", "--out", str(out), "--size", "size=16"])
    assert result.exit_code == 0, result.output
    assert (out / "kernelslist.g").exists()
    sim = runner.invoke(app, ["simulate", str(out), "--gpu", "ampere", "--json"])
    data = json.loads(sim.output)
    assert data["total_cycles"] == sum(k["cycles"] for k in data["kernels"]) > 0
    assert len(data["kernels"]) == 2 * (16 - 1)  # gaussian elimination: 2(N-1) launches
    bad = runner.invoke(app, ["simulate", str(out), "--gpu", "voodoo"])
    assert bad.exit_code == 2 and "choose one of" in bad.output
