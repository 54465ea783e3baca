"""Photon (Liu et al., MICRO 2023), kernel level: reuse a sample when basic-block vectors match.

Invocations are processed in launch order. Invocation ``i`` reuses an earlier sample ``s`` of the
same kernel name when ``||bbv_i - bbv_s|| / ||bbv_i|| < threshold`` (0.05), choosing among such
candidates the one with the closest warp count; otherwise it becomes a new sample. The
basic-block vector here counts executions per PC (extrapolated to the grid), from the trace.
Weight = invocations mapped to the sample.
"""

from __future__ import annotations

import numpy as np

from kernelwright.tools.sampler.base import Sample, Sampler, Selection
from kernelwright.tools.sampler.invocations import WorkloadTraces


class PhotonSampler(Sampler):
    """Online BBV matching with a relative-distance threshold."""

    name = "photon"

    def __init__(self, threshold: float = 0.05) -> None:
        self.threshold = threshold

    def select(self, traces: WorkloadTraces) -> Selection:
        self._check(traces)
        reps: list[int] = []
        by_name: dict[str, list[tuple[int, dict[int, float], float]]] = {}
        labels: list[int] = []
        counts: list[int] = []
        for inv in traces.invocations:
            bbv, warps = inv.profile.bbv, inv.profile.total_warps
            best, best_gap = None, None
            for sid, sbbv, swarps in by_name.get(inv.name, []):
                if _distance(bbv, sbbv) < self.threshold:
                    gap = abs(swarps - warps)
                    if best_gap is None or gap < best_gap:
                        best, best_gap = sid, gap
            if best is None:
                best = len(reps)
                reps.append(inv.index)
                counts.append(0)
                by_name.setdefault(inv.name, []).append((best, bbv, warps))
            counts[best] += 1
            labels.append(best)
        samples = tuple(Sample(r, float(c)) for r, c in zip(reps, counts, strict=True))
        return Selection(self.name, traces.name, samples, tuple(labels))


def _distance(a: dict[int, float], b: dict[int, float]) -> float:
    """||a - b|| / ||a|| over the union of PCs."""
    keys = a.keys() | b.keys()
    diff = np.array([a.get(k, 0.0) - b.get(k, 0.0) for k in keys])
    norm = np.sqrt(sum(v * v for v in a.values()))
    return float(np.linalg.norm(diff) / norm) if norm else float(bool(diff.any()))
