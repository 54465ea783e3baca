"""PKA, Principal Kernel Analysis (Avalos Baddouh et al., MICRO 2021).

Signature per invocation: 12 profile metrics (global load / store sectors, local load sectors;
warp instructions of global load, global store, local load, shared load, shared store, global
atomics; total warp instructions; thread instructions per warp instruction (divergence); grid
size) -> log1p -> standardise -> PCA keeping 99.95% of the variance -> K-Means for k = 1..20;
the smallest k whose projection of the profile cost signal ``c`` (no cycles) is within
``threshold`` is kept. Representative = first member in launch order; predicted time
``t_rep x |cluster|``.
"""

from __future__ import annotations

import numpy as np
from sklearn.decomposition import PCA
from sklearn.preprocessing import StandardScaler

from kernelwright.tools.sampler.base import Sampler, Selection, group_weights
from kernelwright.tools.sampler.cluster import kmeans
from kernelwright.tools.sampler.invocations import KernelProfile, WorkloadTraces


def pka_metrics(p: KernelProfile) -> list[float]:
    """The 12 PKA metrics of one invocation."""
    return [p.global_load_sectors, p.global_store_sectors, p.local_load_sectors,
            p.count("ld_global"), p.count("st_global"), p.count("ld_local"),
            p.count("ld_shared"), p.count("st_shared"), p.count("atomic"), p.warp_instructions,
            p.thread_instructions / max(p.warp_instructions, 1.0), p.grid_ctas]  # fmt: skip


class PKASampler(Sampler):
    """PCA of 12 profile metrics + K-Means, k = smallest in 1..k_max within ``threshold``."""

    name = "pka"

    def __init__(self, threshold: float = 0.05, k_max: int = 20, seed: int = 0) -> None:
        self.threshold, self.k_max, self.seed = threshold, k_max, seed

    def select(self, traces: WorkloadTraces) -> Selection:
        self._check(traces)
        x = np.log1p(np.array([pka_metrics(i.profile) for i in traces.invocations]))
        x = StandardScaler().fit_transform(x)
        if len(x) > 1 and np.any(x.std(0) > 0):
            x = PCA(n_components=0.9995, svd_solver="full").fit_transform(x)
        signal = traces.time_proxy()
        total = signal.sum()
        best = None
        for k in range(1, min(self.k_max, len(x)) + 1):
            labels = kmeans(x, k, None, self.seed)
            reps = {int(lab): int(np.flatnonzero(labels == lab)[0]) for lab in np.unique(labels)}
            proj = sum(signal[r] * np.sum(labels == lab) for lab, r in reps.items())
            err = abs(proj - total) / max(total, 1e-12)
            best = (labels, reps, err, k)
            if err <= self.threshold:
                break
        labels, reps, err, k = best
        return Selection(self.name, traces.name, group_weights(labels.tolist(), reps),
                         tuple(int(v) for v in labels), {"k": k, "signal_error": err})  # fmt: skip
