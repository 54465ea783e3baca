"""`kernelwright app`: rank a trace's kernels, optimise a mapped target for real, estimate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app
from tests.tools.sampler.conftest import write_tiny_trace

ROOT = Path(__file__).resolve().parents[2]
GELU = ROOT / "examples" / "tasks" / "l1_gelu.py"


@pytest.fixture
def trace(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("KERNELWRIGHT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELWRIGHT_DATA_DIR", str(tmp_path / "data"))
    write_tiny_trace(tmp_path / "app")
    return tmp_path / "app"


def test_app_without_tasks_ranks_and_names_the_missing_task(trace):
    res = CliRunner().invoke(app, ["app", str(trace), "--method", "photon", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["application_speedup"] == pytest.approx(1.0)
    assert all(t["speedup"] is None and "--task" in t["note"] for t in out["targets"])
    bad = CliRunner().invoke(app, ["app", str(trace), "--method", "photon", "--task", "gelu"])
    assert bad.exit_code == 2 and "KERNEL=TASK_FILE" in bad.output
    unknown = CliRunner().invoke(app, ["app", str(trace), "--method", "photon",
                                       "--task", f"nope={GELU}"])  # fmt: skip
    assert unknown.exit_code == 2 and "does not run" in unknown.output


@pytest.mark.slow
@pytest.mark.requires_sycl
def test_app_optimises_the_top_kernel_through_a_real_run(trace):
    ranking = json.loads(CliRunner().invoke(
        app, ["app", str(trace), "--method", "photon", "--json"]).stdout)["ranking"]
    top = ranking[0]
    res = CliRunner().invoke(app, ["app", str(trace), "--method", "photon", "--top", "1",
                                   "--budget", "1", "--task", f"{top['name']}={GELU}",
                                   "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    (target,) = out["targets"]
    assert target["kernel"] == top["name"] and target["run_id"]
    assert target["speedup"] is not None and target["speedup"] > 0
    adopted = max(target["speedup"], 1.0)
    share = top["share"]
    assert out["application_speedup"] == pytest.approx(1 / (1 - share + share / adopted))
