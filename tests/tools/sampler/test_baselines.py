"""The published baselines, each on the tiny folder and on hand-made signals."""

from __future__ import annotations

import numpy as np
import pytest

from kernelwright.tools.sampler import get_sampler
from kernelwright.tools.sampler.baselines.sieve import cov, kde_split
from kernelwright.tools.sampler.baselines.stem import samples_needed

METHODS = ["pka", "sieve", "stem", "photon", "random"]


@pytest.mark.parametrize("method", METHODS)
def test_weights_stand_for_every_invocation(tiny_traces, method):
    sel = get_sampler(method).select(tiny_traces)
    assert sel.method == method and sel.samples
    assert sum(s.weight for s in sel.samples) == pytest.approx(len(tiny_traces))
    assert all(0 <= i < len(tiny_traces) for i in sel.indices)


def test_sieve_tiers(tiny_traces):
    sel = get_sampler("sieve").select(tiny_traces)
    # scale and big are constant (tier 1, first invocation); reduce varies by < 0.4 (tier 2)
    assert sel.info["names_per_tier"] == {1: 2, 2: 1, 3: 0}
    assert sorted(sel.indices) == [0, 1, 24]


def test_sieve_kde_splits_two_modes():
    counts = np.array([100.0] * 10 + [101.0] * 5 + [5000.0] * 6 + [5050.0] * 4)
    strata = kde_split(counts, np.arange(len(counts)))
    assert [len(s) for s in strata] == [15, 10]
    assert cov(np.array([2.0, 2.0])) == 0


def test_stem_sample_size_formula():
    d = np.array([90.0, 110.0] * 50)  # sigma/mu = 0.1
    assert samples_needed(d, 0.05) == int(np.ceil((1.96 / 0.05 * 0.1) ** 2))  # 16
    assert samples_needed(np.full(10, 3.0), 0.05) == 1


def test_photon_reuses_identical_invocations(tiny_traces):
    sel = get_sampler("photon").select(tiny_traces)
    scale = [s for s in sel.samples if tiny_traces.invocations[s.index].name == "scale"]
    assert len(scale) == 1 and scale[0].weight == 12


def test_random_budget_and_seed(tiny_traces):
    a = get_sampler("random", budget=5, seed=1).select(tiny_traces)
    b = get_sampler("random", budget=5, seed=1).select(tiny_traces)
    assert a.indices == b.indices and len(a.samples) == 5


def test_unknown_method_lists_choices():
    with pytest.raises(ValueError, match="gcl"):
        get_sampler("nope")
