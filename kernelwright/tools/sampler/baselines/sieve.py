"""Sieve (Naderan-Tahan et al., ISPASS 2023): stratified sampling by kernel name.

Per kernel name, the coefficient of variation CoV = sigma/mu of the invocations' instruction
counts decides the tier:

* CoV = 0 - tier 1: the first invocation stands for all;
* 0 < CoV < 0.4 - tier 2: the first invocation with the most frequent thread count;
* CoV >= 0.4 - tier 3: sort by instruction count, split at the local minima of a 1-D Gaussian
  KDE of the counts, re-split sub-strata whose CoV > 0.5 the same way; the first invocation of
  each stratum. Weight = stratum size.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import gaussian_kde

from kernelwright.tools.sampler.base import Sample, Sampler, Selection
from kernelwright.tools.sampler.invocations import WorkloadTraces


def cov(x: np.ndarray) -> float:
    """Coefficient of variation (0 for constant or empty)."""
    m = float(np.mean(x)) if len(x) else 0.0
    return float(np.std(x)) / m if m > 0 else 0.0


def kde_split(counts: np.ndarray, members: np.ndarray, depth: int = 0) -> list[np.ndarray]:
    """Strata of ``members`` (sorted by count) cut at the KDE's local minima."""
    order = members[np.argsort(counts[members], kind="stable")]
    vals = counts[order]
    if len(np.unique(vals)) < 3 or depth > 4:
        return [order]
    grid = np.linspace(vals[0], vals[-1], 512)
    dens = gaussian_kde(vals)(grid)
    minima = grid[1:-1][(dens[1:-1] < dens[:-2]) & (dens[1:-1] <= dens[2:])]
    cuts = np.searchsorted(vals, minima)
    strata = [s for s in np.split(order, cuts) if len(s)]
    out: list[np.ndarray] = []
    for s in strata:
        if cov(counts[s]) > 0.5 and len(strata) > 1:
            out += kde_split(counts, s, depth + 1)
        else:
            out.append(s)
    return out


class SieveSampler(Sampler):
    """Tiers by the CoV of instruction counts within each kernel name."""

    name = "sieve"

    def __init__(self, tier2: float = 0.4) -> None:
        self.tier2 = tier2

    def select(self, traces: WorkloadTraces) -> Selection:
        self._check(traces)
        inv = traces.invocations
        counts = np.array([i.profile.warp_instructions for i in inv])
        threads = np.array([i.profile.grid_ctas * i.profile.threads_per_cta for i in inv])
        labels = np.zeros(len(inv), int)
        samples: list[Sample] = []
        tiers = {1: 0, 2: 0, 3: 0}
        for name in dict.fromkeys(i.name for i in inv):
            members = np.array([i.index for i in inv if i.name == name])
            c = cov(counts[members])
            if c == 0:
                strata, tier = [members], 1
            elif c < self.tier2:
                strata, tier = [members], 2
            else:
                strata, tier = kde_split(counts, members), 3
            tiers[tier] += 1
            for s in strata:
                rep = int(np.min(s))
                if tier == 2:
                    values, freq = np.unique(threads[s], return_counts=True)
                    common = values[np.argmax(freq)]
                    rep = int(np.min(s[threads[s] == common]))
                labels[s] = len(samples)
                samples.append(Sample(rep, float(len(s))))
        return Selection(self.name, traces.name, tuple(samples), tuple(labels.tolist()),
                         {"names_per_tier": tiers})  # fmt: skip
