"""STEM + ROOT (2024): statistical sample sizes per kernel name, with recursive splitting.

Per kernel name with durations ``d`` (mean mu, std sigma), the samples needed for error
``eps`` at 95% confidence are ``n = ceil((c sigma / mu)^2)``, ``c = 1.96 / eps`` (eps = 0.05).
ROOT splits a name's durations by 2-means (1-D) when the split is cheaper to simulate,
``sum_i n_i mu_i < n mu``, and recurses. Each leaf draws ``n`` random members (seeded), each
weighted ``N / n``.

Durations: STEM profiles them on hardware; here they are the cheap profile cost estimate
(warp instructions + 4 x memory sectors from the trace), never the scored cycles.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.cluster import KMeans

from kernelwright.tools.sampler.base import Sample, Sampler, Selection
from kernelwright.tools.sampler.invocations import WorkloadTraces


def samples_needed(d: np.ndarray, eps: float) -> int:
    """n = ceil((1.96 / eps * sigma / mu)^2), at least 1 and at most len(d)."""
    mu = float(d.mean())
    if mu <= 0 or len(d) < 2:
        return 1
    n = math.ceil((1.96 / eps * float(d.std()) / mu) ** 2)
    return int(min(max(n, 1), len(d)))


class StemRootSampler(Sampler):
    """STEM sample sizes with ROOT's recursive 2-means splits, on cheap duration estimates."""

    name = "stem"

    def __init__(self, eps: float = 0.05, seed: int = 0, max_depth: int = 8) -> None:
        self.eps, self.seed, self.max_depth = eps, seed, max_depth

    def select(self, traces: WorkloadTraces) -> Selection:
        self._check(traces)
        rng = np.random.default_rng(self.seed)
        d = traces.time_proxy()
        labels = np.zeros(len(d), int)
        samples: list[Sample] = []
        leaves = 0
        for name in dict.fromkeys(i.name for i in traces.invocations):
            members = np.array([i.index for i in traces.invocations if i.name == name])
            for leaf in self._root(d, members, 0):
                n = samples_needed(d[leaf], self.eps)
                chosen = np.sort(rng.choice(leaf, n, replace=False))
                samples += [Sample(int(i), len(leaf) / n) for i in chosen]
                labels[leaf] = leaves
                leaves += 1
        return Selection(self.name, traces.name, tuple(samples), tuple(labels.tolist()),
                         {"leaves": leaves})  # fmt: skip

    def _root(self, d: np.ndarray, members: np.ndarray, depth: int) -> list[np.ndarray]:
        n = samples_needed(d[members], self.eps)
        if n <= 1 or depth >= self.max_depth or len(np.unique(d[members])) < 2:
            return [members]
        split = KMeans(2, n_init=3, random_state=self.seed).fit_predict(d[members, None])
        parts = [members[split == s] for s in (0, 1)]
        cost = sum(samples_needed(d[p], self.eps) * d[p].mean() for p in parts)
        if cost >= n * d[members].mean():
            return [members]
        return [leaf for p in parts for leaf in self._root(d, p, depth + 1)]
