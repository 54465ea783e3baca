"""The report in headless Chromium: loads offline with no console errors, the figures laid out
at a readable size, no blank half page, the verdict in its colour; screenshots kept
(``KERNELWRIGHT_TEST_ARTIFACTS=DIR`` keeps them in DIR)."""

from __future__ import annotations

import pytest

from kernelwright.report.html import write_report
from kernelwright.spec.peaks import MachinePeaks

from .chromium import find_chromium, load_page
from .conftest import HOSTILE

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(find_chromium() is None,
                       reason="chromium is not installed (`make setup` installs it)"),
]  # fmt: skip

PEAKS = MachinePeaks(machine="Test CPU, 2 cores", bandwidth_gbps=8.0, gflops=40.0,
                     triad_gbps=8.0, copy_gbps=6.5, measured_at=0.0)  # fmt: skip
RED, GREEN = "rgb(253, 236, 234)", "rgb(230, 244, 234)"  # the verdict banners' backgrounds


def _check(load, artifacts, name, charts):
    assert load.errors == [], load.errors
    assert all(url.startswith(("file:", "data:")) for url in load.requests), load.requests
    assert load.screenshot[:8] == b"\x89PNG\r\n\x1a\n" and len(load.screenshot) > 20_000
    (artifacts / name).write_bytes(load.screenshot)
    layout = load.layout
    svgs = layout["svgs"]
    assert len(svgs) == charts, layout
    assert all(w >= 300 and h >= 150 for w, h, _ in svgs), svgs  # every figure drawn, readable
    # nothing spills sideways: neither the page nor any figure
    assert layout["scrollWidth"] <= layout["clientWidth"], layout
    assert all(right <= layout["clientWidth"] for _, _, right in svgs), (svgs, layout)
    assert load.blank_share() < 0.15  # no blank half page


def test_real_run_report_loads_cleanly(real_store, artifacts, tmp_path):
    page = tmp_path / "real.html"
    write_report(real_store, ["real"], page, tmp_path / "real.md", peaks=PEAKS)
    load = load_page(page.as_uri())
    _check(load, artifacts, "report-real-run.png", charts=3)
    assert "l1_gelu" in load.text and "Best kernel" in load.text
    assert "evaluations" in load.text and "roofline" in load.text.lower()
    assert "Verdict:" in load.text and " ms" in load.text
    assert "memory 8.0 GB/s" in load.text and "compute 40.0 GFLOP/s" in load.text
    assert load.layout["verdict"] == [GREEN if "faster: use the kernel" in load.text else RED]
    assert load.layout["hidden"][0] == 0  # the task table fits 1280 px: no column scrolled away


def test_keep_pytorch_report_is_red(slow_store, artifacts, tmp_path):
    page = tmp_path / "slow.html"
    write_report(slow_store, ["slow"], page, peaks=PEAKS)
    load = load_page(page.as_uri())
    _check(load, artifacts, "report-keep-pytorch.png", charts=3)
    assert "Verdict: keep PyTorch (0.98x of PyTorch eager: eager 0.98 ms, kernel 1 ms, " \
           "torch.compile 0.8 ms)" in load.text  # fmt: skip
    assert load.layout["verdict"] == [RED] and load.layout["hidden"][0] == 0


def test_hostile_text_is_shown_not_run(scripted_store, artifacts, tmp_path):
    page = tmp_path / "campaign.html"
    write_report(scripted_store, ["good", "hostile"], page, peaks=PEAKS)
    load = load_page(page.as_uri())
    _check(load, artifacts, "report-scripted-campaign.png", charts=4)
    assert HOSTILE in load.text  # the literal text is on the page, and nothing ran
