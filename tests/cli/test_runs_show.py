"""`runs` and `show` as a user reads them: nothing cut at 40 columns, no heavy imports."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernelwright.config import Settings
from kernelwright.graphs.runner import start_run
from kernelwright.spec import Candidate
from tests.graphs.fakes import FakeCoder, FakeEvaluator, fake_context_factory

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "examples" / "tasks" / "l1_gelu.py"
RUN_ID = "l1_gelu-a-run-id-long-enough-to-be-cut-by-any-narrow-table-20261203-abcdef"
LONG_LINE = "WEIGHTS = [" + ", ".join(str(i) for i in range(120)) + "]  # end-of-the-long-line"


class LongLineCoder(FakeCoder):
    def propose(self, task, contract, plan, history, n):
        return [c.model_copy(update={"source": f"{c.source}\n{LONG_LINE}\n"})
                for c in super().propose(task, contract, plan, history, n)]  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("runs-show")
    settings = Settings(data_dir=root, cache_dir=root / "cache", budget=2, backend="cpp")
    base = fake_context_factory(FakeEvaluator())

    def factory(settings, store, run_id):
        ctx = base(settings, store, run_id)
        inner = ctx.__enter__()
        inner.coder = LongLineCoder()
        return _Passthrough(ctx, inner)

    start_run(TASK, settings, run_id=RUN_ID, context_factory=factory)
    return root


class _Passthrough:
    def __init__(self, ctx, inner) -> None:
        self.ctx, self.inner = ctx, inner

    def __enter__(self):
        return self.inner

    def __exit__(self, *exc):
        return self.ctx.__exit__(*exc)


def _cli(store: Path, *args: str, probe: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "40"}
    code = ("import sys\nfrom kernelwright.cli import app\n"
            f"sys.argv = ['kernelwright', *{list(args)!r}, '--store', {str(store)!r}]\n"
            "try:\n    app()\nexcept SystemExit as e:\n    code = e.code\n"
            f"{probe}\nsys.exit(code)\n")  # fmt: skip
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


HEAVY = "print('HEAVY', sorted(m for m in ('torch', 'langgraph.graph') if m in sys.modules))"


def test_runs_prints_whole_ids_with_backend_time_and_verdict(store):
    proc = _cli(store, "runs", probe=HEAVY)
    assert proc.returncode == 0, proc.stderr
    header, row = proc.stdout.splitlines()[:2]
    for column in ("run id", "backend", "verdict", "time"):
        assert column in header
    assert row.split()[:3] == [RUN_ID, "l1_gelu", "cpp"]
    assert "faster" in row.split()  # done, best 5.0x: the verdict from spec.verdict_for
    assert "HEAVY []" in proc.stdout  # listing runs imports neither torch nor the graph


def test_show_prints_source_lines_whole(store):
    proc = _cli(store, "show", RUN_ID, probe=HEAVY)
    assert proc.returncode == 0, proc.stderr
    assert LONG_LINE in proc.stdout.splitlines()
    assert RUN_ID in proc.stdout.splitlines()[0]
    assert "HEAVY []" in proc.stdout  # showing a run does not import torch or build the graph


def test_candidate_ids_are_whole_in_show(store):
    proc = _cli(store, "show", RUN_ID)
    ids = [Candidate(source="x").id]  # the form of an id: 16 hex digits
    rows = [line.split() for line in proc.stdout.splitlines() if line[:1].isdigit()]
    assert rows and all(len(r[1]) == len(ids[0]) for r in rows)
