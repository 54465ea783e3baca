"""benchmarks/kernelbench_sweep.py: a directory of task files through contract derivation
and the lowering, each file in its own process, a failure costing its row only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

GOOD = '''import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 5)

    def forward(self, x):
        return torch.tanh(self.fc(x)) * 2


def get_inputs():
    return [torch.randn(9, 12)]


def get_init_inputs():
    return []
'''

BROKEN = '''import torch


class Model(torch.nn.Module):
    def forward(self, x):
        raise RuntimeError("boom")


def get_inputs():
    return [torch.randn(3)]


def get_init_inputs():
    return []
'''


def test_sweep_lowers_runs_and_reports_each_file(tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "broken.py").write_text(BROKEN)
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "kernelbench_sweep.py"),
                           "--tasks", str(tmp_path), "--backend", "cpp"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert any(ln.startswith("  broken: contract failed:") and "boom" in ln for ln in lines)
    good = next(ln for ln in lines if ln.startswith("  good:"))
    assert "3 shape set(s)" in good and "vs float64: match" in good
    assert lines[-1] == ("2 files, 1 contracts derived, 1 with two scaled variants, "
                         "1 lowered and run, 1 match, 1 failed at contract")
