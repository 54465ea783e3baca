"""`kernelwright show RUN --configs [--csv]`: every evaluated configuration, never cut."""

from __future__ import annotations

import csv
import io

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app


def _show(store, *args, env=None):
    result = CliRunner().invoke(app, ["show", "good", "--store", str(store), *args], env=env)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_csv_lists_every_configuration_with_params_ms_and_verdict(scripted_store):
    rows = list(csv.DictReader(io.StringIO(_show(scripted_store, "--configs", "--csv"))))
    assert [int(r["order"]) for r in rows] == [1, 2, 3, 4, 5, 6]
    assert [r["block"] for r in rows] == ["1", "2", "3", "4", "5", "6"]
    assert [r["verdict"] for r in rows] == ["faster"] * 2 + ["value_mismatch"] + ["faster"] * 3
    # scripted timing: eager = 1 ms, kernel = 1 / speedup ms; the wrong one has no timing
    assert float(rows[1]["reference_ms"]) == pytest.approx(1.0)
    assert float(rows[1]["candidate_ms"]) == pytest.approx(0.5)
    assert float(rows[3]["speedup"]) == pytest.approx(3.0)
    assert rows[2]["reference_ms"] == rows[2]["speedup"] == ""
    assert {"compile_ms", "speedup_low", "speedup_high", "candidate"} <= set(rows[0])


def test_table_is_never_truncated_even_at_40_columns(scripted_store):
    wide = _show(scripted_store, "--configs")
    narrow = _show(scripted_store, "--configs", env={"COLUMNS": "40"})
    assert narrow == wide
    lines = wide.splitlines()
    assert lines[0].split()[:5] == ["order", "candidate", "origin", "stage", "block"]
    assert len(lines) == 2 + 6 and "…" not in wide
    csv_ids = [r["candidate"] for r in csv.DictReader(io.StringIO(
        _show(scripted_store, "--configs", "--csv")))]  # fmt: skip
    assert all(cid in wide for cid in csv_ids)  # full ids, copyable
    row2 = lines[3].split()
    assert row2[4] == "2" and "2.00x" in row2 and "faster" in row2


def test_slow_configurations_read_not_faster(slow_store):
    result = CliRunner().invoke(app, ["show", "slow", "--configs", "--csv",
                                      "--store", str(slow_store)])  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["verdict"] for r in rows] == ["not faster"] * 3
    assert float(rows[0]["speedup"]) == pytest.approx(0.98)
    assert float(rows[0]["compile_ms"]) == pytest.approx(0.8)


def test_unknown_run_is_one_line_naming_the_fix(scripted_store):
    result = CliRunner().invoke(app, ["show", "nope", "--configs", "--store", str(scripted_store)])
    assert result.exit_code == 2 and "kernelwright runs" in result.output
