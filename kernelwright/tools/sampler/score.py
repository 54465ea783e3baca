"""Error and speedup of a selection against per-invocation reference cycles.

For per-invocation times ``t_i`` and a selection of representatives ``s`` with weights ``w_s``:

    error   = |sum_i t_i - sum_s w_s t_s| / sum_i t_i
    speedup = sum_i t_i / sum_{distinct s} t_s          (what simulating only the samples saves)

Across workloads: arithmetic and harmonic means of speedup (the harmonic mean is what published
"average speedup" figures usually are, and the honest one: it is dominated by the workloads that
cannot be sampled much), mean and max error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from statistics import harmonic_mean

import numpy as np

from kernelwright.tools.sampler.base import Selection


@dataclass(frozen=True)
class Score:
    """One selection scored on one workload."""

    workload: str
    method: str
    error: float
    speedup: float
    samples: int
    invocations: int
    total_cycles: float
    projected_cycles: float

    def as_dict(self) -> dict:
        return asdict(self)


def score(selection: Selection, cycles: Sequence[float] | np.ndarray) -> Score:
    """Score ``selection`` against the reference ``cycles`` of every invocation."""
    t = np.asarray(cycles, float)
    total = float(t.sum())
    projected = selection.projected(t)
    distinct = sorted(set(selection.indices))
    simulated = float(t[distinct].sum())
    return Score(selection.workload, selection.method, abs(total - projected) / total,
                 total / simulated if simulated else float("inf"), len(distinct), len(t),
                 total, projected)  # fmt: skip


@dataclass(frozen=True)
class Summary:
    """Means over workloads for one method."""

    method: str
    harmonic_speedup: float
    arithmetic_speedup: float
    mean_error: float
    max_error: float
    samples: int

    def as_dict(self) -> dict:
        return asdict(self)


def summarize(scores: Sequence[Score]) -> Summary:
    """Harmonic and arithmetic mean speedup, mean and max error over ``scores``."""
    sp = [s.speedup for s in scores]
    err = [s.error for s in scores]
    return Summary(scores[0].method, harmonic_mean(sp), float(np.mean(sp)), float(np.mean(err)),
                   float(np.max(err)), sum(s.samples for s in scores))  # fmt: skip
