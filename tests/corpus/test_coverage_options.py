"""benchmarks/corpus_coverage.py: its options, the task selection and space override, and a smoke
run."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TINY = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.{op}(x)


def get_inputs():
    return [torch.randn(8, 256)]


def get_init_inputs():
    return []
'''


def _coverage():
    spec = importlib.util.spec_from_file_location("kw_coverage", ROOT / "benchmarks" /
                                                  "corpus_coverage.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["kw_coverage"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def kb_dir(tmp_path):
    d = tmp_path / "level1"
    d.mkdir()
    (d / "19_ReLU.py").write_text(TINY.format(op="relu"))
    (d / "21_Sigmoid.py").write_text(TINY.format(op="sigmoid"))
    (d / "__init__.py").write_text("")
    return d


def test_options_parse():
    cov = _coverage()
    args = cov.parse(["--tasks", "/x", "--spaces", "all", "--budget", "8", "--min-time", "0.1"])
    assert (args.tasks, args.spaces, args.budget, args.min_time) == (Path("/x"), "all", 8, 0.1)
    assert cov.parse([]).spaces == "custom" and cov.parse([]).tasks is None
    with pytest.raises(SystemExit):
        cov.parse(["--spaces", "vendor-only"])


def test_task_directory_families_and_spaces(kb_dir, tmp_path):
    cov = _coverage()
    corpus = cov.load_corpus()
    paths = cov.task_files(cov.parse(["--tasks", str(kb_dir)]), corpus)
    assert [p.name for p in paths] == ["19_ReLU.py", "21_Sigmoid.py"]
    assert cov.family_guess(paths[0], corpus) == "pointwise"
    gemm = tmp_path / "level2" / "12_Gemm_Multiply_LeakyReLU.py"
    gemm.parent.mkdir()
    gemm.write_text(TINY.format(op="relu"))
    assert cov.family_guess(gemm, corpus) == "gemm_epilogue"
    out = tmp_path / "copies"
    out.mkdir()
    copy = cov.with_spaces(paths[0], "custom", out)
    from kernelwright.spec import Task, derive_contract

    assert [s.value for s in derive_contract(Task.from_path(copy)).allowed_spaces] == [
        "custom_kernel"]
    assert cov.with_spaces(paths[0], "task", out) == paths[0]
    with pytest.raises(SystemExit, match="not a directory"):
        cov.task_files(cov.parse(["--tasks", str(tmp_path / "nope")]), corpus)


@pytest.mark.slow
def test_smoke_on_two_tiny_tasks_at_budget_1(kb_dir, tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "corpus_coverage.py"), "--tasks", str(kb_dir),
         "--backend", "cpp", "--budget", "1", "--min-time", "0.02", "--json"],
        capture_output=True, text=True, timeout=900, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout[done.stdout.index("{"):])
    total = report["families"]["total"]
    assert total["tasks"] == 2 and total["lowered"] == 2 and total["correct"] == 2
    assert report["load_average"]["cores"] >= 1
    for row in report["rows"]:
        assert row["candidate_ms"] > 0 and row["reference_ms"] > 0
        assert row["compile_ms"] is not None and row["compile_recompiles"] == 0


def test_share_of_tasks_whose_answer_is_the_reference(capsys):
    cov = _coverage()
    rows = [cov.Row(task="a", family="gemm", correct=True, speedup=0.5, answer="reference"),
            cov.Row(task="b", family="gemm", correct=True, speedup=1.5, answer="kernel"),
            cov.Row(task="c", family="rows", correct=True, speedup=0.9, answer="reference")]
    table = cov.table(rows, compile_ok=False)
    assert (table["gemm"]["reference_chosen"], table["gemm"]["answered"]) == (1, 2)
    assert (table["total"]["reference_chosen"], table["total"]["answered"]) == (2, 3)
    # The speedups stay the kernels' own: the reference's ~1.0x never enters the geomean.
    assert table["gemm"]["geomean_vs_eager"] == pytest.approx((0.5 * 1.5) ** 0.5)
    args = cov.parse(["--budget", "8"])
    cov.print_report(rows, args, cov.Settings(budget=8), "off", [])
    out = capsys.readouterr().out
    assert "ref chosen" in out and "50%" in out and "100%" in out


def test_a_crash_on_one_task_is_its_row_and_the_run_goes_on(kb_dir, monkeypatch, capsys):
    coverage = _coverage()
    seen = []

    def crashing(task, backend, settings, row):
        seen.append(task.name)
        if len(seen) == 1:
            raise KeyError("rows")  # the planner's bug of level-3 UNetSoftmax, one task in
        row.lowered = row.correct = True

    monkeypatch.setattr(coverage, "evaluate_lowered", crashing)
    assert coverage.main(["--tasks", str(kb_dir), "--backend", "cpp", "--no-compile"]) == 0
    out = capsys.readouterr().out
    assert len(seen) == 2
    assert "internal error, please report: KeyError: 'rows'" in out
