"""Random sampling at a fixed budget: the floor any sampler must beat.

Draw ``budget`` invocations uniformly without replacement (seeded); each stands for
``N / budget`` invocations, so ``T_hat = N * mean(t_s)``.
"""

from __future__ import annotations

import numpy as np

from kernelwright.tools.sampler.base import Sample, Sampler, Selection
from kernelwright.tools.sampler.invocations import WorkloadTraces


class RandomSampler(Sampler):
    """Uniform random invocations; ``budget`` is usually another sampler's sample count."""

    name = "random"

    def __init__(self, budget: int = 10, seed: int = 0) -> None:
        self.budget, self.seed = budget, seed

    def select(self, traces: WorkloadTraces) -> Selection:
        self._check(traces)
        n = len(traces)
        b = int(min(max(self.budget, 1), n))
        chosen = np.sort(np.random.default_rng(self.seed).choice(n, b, replace=False))
        samples = tuple(Sample(int(i), n / b) for i in chosen)
        return Selection(self.name, traces.name, samples, (), {"budget": b})
