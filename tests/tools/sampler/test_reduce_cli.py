"""`kernelwright sample`: the table, --json, and a reduced folder that the reader reads back."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app
from kernelwright.tools.gpusim.traces import MemcpyCommand, iter_kernels, read_trace_dir
from kernelwright.tools.sampler import read_weights


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELWRIGHT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELWRIGHT_DATA_DIR", str(tmp_path / "data"))


def test_sample_json_and_reduced_folder(tiny_trace, tmp_path, env):
    out = tmp_path / "reduced"
    res = CliRunner().invoke(app, ["sample", str(tiny_trace), "--method", "sieve", "--out",
                                   str(out), "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    reps = report["representatives"]
    assert sum(r["weight"] for r in reps) == report["invocations"] == 26
    assert report["projected_cycles"] == pytest.approx(
        sum(r["weight"] * r["cycles"] for r in reps))
    items = list(read_trace_dir(out))
    assert isinstance(items[0], MemcpyCommand)
    kernels = list(iter_kernels(out))
    assert [k.info.kernel_id for k in kernels] == [r["kernel_id"] for r in reps]
    assert all(k.path.suffix == ".traceg" for k in kernels)  # plain files Accel-Sim reads
    assert sum(len(w.instructions) for k in kernels for w in k.warps()) > 0
    rows = read_weights(out)
    assert [r.weight for r in rows] == [r["weight"] for r in reps]


def test_sample_table_and_errors(tiny_trace, tmp_path, env):
    res = CliRunner().invoke(app, ["sample", str(tiny_trace), "--method", "photon"])
    assert res.exit_code == 0, res.output
    assert "projected whole-workload time" in res.output
    bad = CliRunner().invoke(app, ["sample", str(tiny_trace), "--method", "oracle"])
    assert bad.exit_code == 2 and "is not one of" in bad.output and "photon" in bad.output
    missing = CliRunner().invoke(app, ["sample", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "does not exist" in missing.output
