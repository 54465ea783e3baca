"""The report in headless Chromium: loads offline with no console errors; screenshot kept."""

from __future__ import annotations

import pytest

from kernelwright.report.html import write_report

from .chromium import find_chromium, load_page
from .conftest import HOSTILE

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed"),
]


def _check(load, artifacts, name):
    assert load.errors == [], load.errors
    assert all(url.startswith(("file:", "data:")) for url in load.requests), load.requests
    assert load.screenshot[:8] == b"\x89PNG\r\n\x1a\n" and len(load.screenshot) > 20_000
    (artifacts / name).write_bytes(load.screenshot)


def test_real_run_report_loads_cleanly(real_store, artifacts, tmp_path):
    page = tmp_path / "real.html"
    write_report(real_store, ["real"], page, tmp_path / "real.md")
    load = load_page(page.as_uri())
    _check(load, artifacts, "report-real-run.png")
    assert "l1_gelu" in load.text and "Best kernel" in load.text
    assert "evaluations" in load.text and "roofline" in load.text.lower()


def test_hostile_text_is_shown_not_run(scripted_store, artifacts, tmp_path):
    page = tmp_path / "campaign.html"
    write_report(scripted_store, ["good", "hostile"], page)
    load = load_page(page.as_uri())
    _check(load, artifacts, "report-scripted-campaign.png")
    assert HOSTILE in load.text  # the literal text is on the page, and nothing ran
