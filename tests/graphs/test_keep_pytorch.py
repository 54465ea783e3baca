"""A run whose best correct kernel is 0.38x of eager: every surface says "keep PyTorch (0.38x)"
with the medians in ms, and none calls it a speedup."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from kernelwright.agents.critic import RuleCritic
from kernelwright.agents.profiler import RooflineProfiler
from kernelwright.config import Settings
from kernelwright.graphs.chat_session import ChatSession
from kernelwright.graphs.optimize import OptimizeContext
from kernelwright.graphs.run_summary import build_report_data
from kernelwright.graphs.runner import start_run
from kernelwright.spec.result import EvalResult, Level, Timing

from .fakes import PEAKS, FakeCoder, FakePlanner

TASK = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "l1_gelu.py"
SLOW = "keep PyTorch (0.38x)"


def _slow(task, candidate):
    """Every kernel slower than eager: 2.0 ms against eager's 0.76 ms, the best 0.38x."""
    cand_ms = 1.9 + 0.1 * candidate.params["block"]  # blocks 1, 2, ...: 2.0 ms the best
    timing = Timing(reference_median_s=0.76e-3, reference_iqr_s=1e-6,
                    candidate_median_s=cand_ms / 1e3, candidate_iqr_s=1e-6, repeats=10,
                    speedup=0.76 / cand_ms, speedup_low=0.37, speedup_high=0.39,
                    compile_median_s=0.5e-3, compile_iqr_s=1e-6, compile_recompiles=0)
    return EvalResult(task_name=task.name, candidate_id=candidate.id, backend="torch",
                      level=Level.CORRECT, timing=timing)


def _team(settings, store, run_id):
    return contextlib.nullcontext(OptimizeContext(
        settings=settings, store=store, planner=FakePlanner(), coder=FakeCoder(),
        profiler=RooflineProfiler(PEAKS), critic=RuleCritic(patience=2), evaluate=_slow,
        remeasure=lambda task, cand: _slow(task, cand), batch_size=2))


@pytest.fixture
def settings(tmp_path):
    return Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", budget=3)


@pytest.fixture
def slow_run(settings):
    return start_run(TASK, settings, run_id="slow", context_factory=_team)


def test_report_and_json_say_keep_pytorch(slow_run):
    r = slow_run
    assert r.correct and r.best_speedup == pytest.approx(0.38, abs=0.005)
    assert r.verdict == "keep_pytorch" and r.remeasured
    assert r.reference_ms == pytest.approx(0.76) and r.candidate_ms == pytest.approx(2.0)
    assert r.compile_ms == pytest.approx(0.5)
    data = json.loads(r.model_dump_json())
    assert data["verdict"] == "keep_pytorch" and data["candidate_ms"] == pytest.approx(2.0)


def _text(render) -> str:
    console = Console(record=True, width=200)
    render(console)
    return console.export_text()


def test_cli_text_says_keep_pytorch_in_red_with_ms(slow_run):
    from kernelwright.report.console import print_report

    console = Console(record=True, width=200, color_system="truecolor")
    print_report(console, slow_run)
    styled = console.export_text(styles=True, clear=False)
    text = console.export_text(styles=False)
    assert SLOW in text and "eager 0.760 ms, kernel 2.000 ms" in text
    assert "slower than torch.compile" in text
    assert "best speedup" not in text and "not recommended" in text
    assert "\x1b[1;31mkeep PyTorch (0.38x)" in styled  # bold red


def test_cli_optimize_json_and_text(slow_run, monkeypatch):
    import kernelwright
    from kernelwright.cli import app

    monkeypatch.setattr(kernelwright, "optimize", lambda *a, **k: slow_run)
    done = CliRunner().invoke(app, ["optimize", str(TASK), "--json"])
    assert done.exit_code == 0  # a correct kernel; the verdict, not the exit code, says "keep"
    assert json.loads(done.stdout.strip().splitlines()[-1])["verdict"] == "keep_pytorch"
    done = CliRunner().invoke(app, ["optimize", str(TASK)])
    assert SLOW in done.stdout


def test_show_and_summary_say_keep_pytorch(slow_run, settings):
    from kernelwright.report.show import print_run

    text = _text(lambda c: print_run(c, "slow", settings, None))
    assert SLOW in text and "0.760 / 2.000" in text
    (run,) = build_report_data(settings.data_dir, ["slow"]).runs
    assert run.verdict == "keep_pytorch" and run.best.remeasured
    assert run.best.candidate_ms == pytest.approx(2.0)


def test_mcp_best_kernel_says_keep_pytorch(slow_run, settings):
    from kernelwright.serve.mcp import KernelwrightTools
    from kernelwright.serve.roots import Roots

    tools = KernelwrightTools(settings, Roots([TASK.parent]), settings.data_dir)
    best = tools.best("slow")
    assert best.verdict == "keep_pytorch" and best.verdict_text.startswith(SLOW)
    assert best.reference_ms == pytest.approx(0.76)


def test_chat_review_and_final_message_say_keep_pytorch(settings):
    from kernelwright.agents.request_parser import OfflineRequestParser
    from kernelwright.cli.chat import review_lines

    request = OfflineRequestParser().parse(f"make {TASK} faster")
    session = ChatSession.create(request, settings, settings.data_dir, context_factory=_team)
    session.advance(None)
    pause = session.advance({"approve": True})
    assert pause.payload["kind"] == "kernel" and pause.payload["verdict"] == "keep_pytorch"
    assert any(SLOW in line for line in review_lines(pause.payload))
    done = session.advance({"approve": True})
    assert done.kind == "done" and done.payload["verdict"] == "keep_pytorch"
    assert done.payload["verdict_text"].startswith(SLOW)
