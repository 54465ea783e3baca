"""Every report surface shows the verdict in colour and the ms behind every ratio."""

from __future__ import annotations

import re

import pytest

from kernelwright.graphs.run_summary import build_report_data
from kernelwright.graphs.summary_models import CandidateRecord, RunSummary
from kernelwright.report.html import render_html, speed_class
from kernelwright.report.markdown import render_markdown
from kernelwright.spec.peaks import MachinePeaks

from .conftest import PEAKS

MEASURED = MachinePeaks(machine="Test CPU, 4 cores", bandwidth_gbps=20.0, gflops=400.0,
                        triad_gbps=20.0, copy_gbps=18.0, measured_at=0.0)  # fmt: skip


def _record(speedup, low=None, high=None, **kw) -> CandidateRecord:
    return CandidateRecord(candidate_id="c", order=1, correct=True, level=5, level_name="correct",
                           speedup=speedup, speedup_low=low, speedup_high=high, **kw)  # fmt: skip


@pytest.mark.parametrize(
    ("speedup", "low", "expected"),
    [(0.98, 0.9, "bad"), (1.0, 0.95, "bad"), (0.38, None, "bad"), (1.2, 0.9, "warn"),
     (1.2, 1.05, "ok"), (3.0, None, "ok")],
)  # fmt: skip
def test_speed_colour_is_green_only_when_faster(speedup, low, expected):
    assert speed_class(_record(speedup, low)) == expected


def test_outcome_prefers_the_recorded_verdict_and_derives_it_otherwise():
    best = _record(1.5)
    run = RunSummary(run_id="r", task="t", backend="cpp", status="done", best=best)
    assert run.outcome == "faster"
    assert run.model_copy(update={"verdict": "keep_pytorch"}).outcome == "keep_pytorch"
    assert run.model_copy(update={"best": _record(1.0)}).outcome == "keep_pytorch"
    assert run.model_copy(update={"best": None}).outcome == "no_correct_kernel"


def test_keep_pytorch_run_is_red_with_its_times(slow_store):
    data = build_report_data(slow_store, ["slow"], MEASURED)
    (run,) = data.runs
    assert run.outcome == "keep_pytorch" and run.best.speedup == pytest.approx(0.98)
    assert (run.best.reference_ms, run.best.candidate_ms, run.best.compile_ms) == pytest.approx(
        (0.98, 1.0, 0.8))
    page = render_html(data)
    assert re.search(r'<div class="verdict bad">Verdict: <b>keep PyTorch</b> \(0\.98x of '
                     r"PyTorch eager: eager 0\.98 ms, kernel 1 ms, torch\.compile 0\.8 ms\)",
                     page)  # fmt: skip
    assert '<td class="num bad">0.98x [0.88x–1.08x]</td>' in page  # 0.98x is never green
    assert '<td class="bad">keep PyTorch</td>' in page
    assert "num ok" not in page and "faster: use the kernel" not in page
    assert "correct, not faster" in page
    text = render_markdown(data)
    assert "**keep PyTorch (0.98x: eager 0.98 ms, kernel 1 ms, torch.compile 0.8 ms)**" in text
    assert "| **keep PyTorch** | 0.98x [0.88x-1.08x] | 0.98 ms | 1 ms | 0.8 ms |" in text


def test_faster_run_is_green_with_its_times(scripted_store):
    data = build_report_data(scripted_store, ["good"], MEASURED)
    page = render_html(data)
    assert '<div class="verdict ok">Verdict: <b>faster: use the kernel</b> (3.00x of PyTorch ' \
           "eager: eager 1 ms, kernel 0.333 ms)" in page  # fmt: skip
    assert '<td class="num ok">3.00x [2.70x–3.30x]</td>' in page
    text = render_markdown(data)
    assert "**faster: use the kernel (3.00x: eager 1 ms, kernel 0.333 ms)**" in text


def test_roofs_are_the_measured_peaks_and_fractions_follow_them(scripted_store):
    # the run was profiled against PEAKS (10 GB/s); the report places it under MEASURED
    stored = build_report_data(scripted_store, ["good"]).runs[0].best
    data = build_report_data(scripted_store, ["good"], MEASURED)
    best = data.runs[0].best
    assert data.roofs.bandwidth_gbps == 20.0 and data.roofs.gflops == 400.0
    assert data.roofs.machine == "Test CPU, 4 cores" and data.roofs.triad_gbps == 20.0
    # 1 MB at 1 FLOP/byte in 1/3 ms (the 3x kernel): memory-bound, t_min = 1e6 / 20e9 s
    # = 0.05 ms, so 15% of the roof
    assert best.bound == "memory" and best.roofline_fraction == pytest.approx(0.15)
    assert stored.roofline_fraction == pytest.approx(
        1e6 / (PEAKS.bandwidth_gbps * 1e9) / (1e-3 / 3))
    page = render_html(data)
    assert "memory 20.0 GB/s (STREAM triad 20.0 GB/s, copy 18.0 GB/s)" in page
    assert "compute 400.0 GFLOP/s" in page and "not known" not in page
    assert "measured roofs: memory 20.0 GB/s" in page  # drawn on the chart itself


def test_without_peaks_the_report_says_how_to_measure_them(scripted_store):
    page = render_html(build_report_data(scripted_store, ["good"]))
    assert "No measured peaks were given" in page and "kernelwright peaks" in page


def test_speedup_plot_has_an_error_bar_per_correct_candidate(slow_store):
    from kernelwright.report.plots import speedup_over_time

    (run,) = build_report_data(slow_store, ["slow"]).runs
    svg = speedup_over_time([run])
    # matplotlib draws each error bar as a LineCollection, one per errorbar() call
    assert svg.count('id="LineCollection_') == len(run.candidates) == 3
    assert "#b42318" in svg  # red dots: not faster than eager
