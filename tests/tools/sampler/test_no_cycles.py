"""Samplers never read the cycles they are scored against.

Two guards: (1) while samplers select, the timing model raises if anything calls it; (2) the
ground-truth cache is filled with garbage and the selections do not change.
"""

from __future__ import annotations

import json

import pytest

from kernelwright.tools.sampler import get_sampler, scan_trace_dir
from kernelwright.tools.sampler.contrastive import TrainConfig
from kernelwright.tools.sampler.groundtruth import invocation_cycles

METHODS = ["gcl", "pka", "sieve", "stem", "photon", "random"]


def _sampler(method):
    if method == "gcl":
        return get_sampler("gcl", train=TrainConfig(epochs=2, hidden=8, batch_size=8))
    return get_sampler(method)


def _forbid_timing(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("a sampler called the timing model")

    import kernelwright.tools.gpusim.timing as timing
    import kernelwright.tools.sampler.groundtruth as gt

    monkeypatch.setattr(timing, "simulate_kernel", boom)
    monkeypatch.setattr(timing, "simulate_trace_dir", boom)
    monkeypatch.setattr(gt, "invocation_cycles", boom)
    monkeypatch.setattr(gt, "simulate_kernel", boom)


@pytest.mark.parametrize("method", METHODS)
def test_selection_runs_with_the_timing_model_forbidden(tiny_trace, tmp_settings, monkeypatch,
                                                        method):  # fmt: skip
    traces = scan_trace_dir(tiny_trace, settings=tmp_settings)
    _forbid_timing(monkeypatch)
    sel = _sampler(method).select(traces)
    assert sel.samples
    assert not any("cycle" in f for f in vars(traces))
    assert not any("cycle" in f for inv in traces.invocations[:1] for f in vars(inv))


@pytest.mark.parametrize("method", METHODS)
def test_selection_ignores_corrupted_ground_truth(tiny_trace, tmp_settings, method):
    real = invocation_cycles(tiny_trace, ["rtx2080ti"], settings=tmp_settings)["rtx2080ti"]
    traces = scan_trace_dir(tiny_trace, settings=tmp_settings)
    before = _sampler(method).select(traces)
    for f in (tmp_settings.cache_dir / "sampler-cycles").glob("*.json"):
        data = json.loads(f.read_text())
        data["cycles"] = [1e9 - c for c in data["cycles"]][::-1]
        f.write_text(json.dumps(data))
    corrupted = invocation_cycles(tiny_trace, ["rtx2080ti"], settings=tmp_settings)
    assert list(corrupted["rtx2080ti"]) != list(real)  # the cache is what scoring would read
    after = _sampler(method).select(scan_trace_dir(tiny_trace, settings=tmp_settings))
    assert before.samples == after.samples
