"""Error and speedup formulas, and the means across workloads."""

from __future__ import annotations

import pytest

from kernelwright.tools.sampler import Sample, Selection, score, summarize


def test_error_and_speedup():
    t = [10.0, 10.0, 10.0, 30.0]
    sel = Selection("m", "w", (Sample(0, 3.0), Sample(3, 1.0)))
    s = score(sel, t)
    assert s.error == pytest.approx(0.0)
    assert s.speedup == pytest.approx(60 / 40)
    off = score(Selection("m", "w", (Sample(3, 4.0),)), t)
    assert off.error == pytest.approx(abs(60 - 120) / 60)
    assert off.speedup == pytest.approx(2.0)


def test_summary_uses_harmonic_and_arithmetic_means():
    a = score(Selection("m", "a", (Sample(0, 2.0),)), [1.0, 1.0])  # speedup 2
    b = score(Selection("m", "b", (Sample(0, 8.0),)), [1.0] * 8)  # speedup 8
    s = summarize([a, b])
    assert s.harmonic_speedup == pytest.approx(2 / (1 / 2 + 1 / 8))
    assert s.arithmetic_speedup == pytest.approx(5.0)
    assert s.max_error == 0.0
