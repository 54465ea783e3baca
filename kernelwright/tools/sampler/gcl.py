"""GCL-Sampler: trace graphs -> RGCN trained by contrastive learning -> K-Means representatives.

Pipeline for one workload (after the encoder is trained, on this or other workloads):

1. identical invocations (same trace digest) collapse into one point with a multiplicity;
2. each point is embedded by the encoder's readout of its :class:`~.hrg.TraceGraph`, and the
   embeddings are standardised per dimension;
3. K-Means with k chosen without ground truth (``k_rule``: ``"bound"`` or ``"silhouette"``, see
   :mod:`.cluster`), multiplicities as sample weights;
4. one representative per cluster (``representative``: ``"centroid"`` or ``"first"``), weight =
   number of invocations in the cluster.

Example:
    >>> sampler = GCLSampler(seed=0)
    >>> sampler.fit([traces])  # doctest: +SKIP
    >>> sampler.select(traces).samples  # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kernelwright.errors import SamplerError
from kernelwright.tools.sampler.base import Sample, Sampler, Selection
from kernelwright.tools.sampler.cluster import (
    choose_k_bound,
    choose_k_silhouette,
    representatives,
)
from kernelwright.tools.sampler.invocations import KernelProfile, WorkloadTraces

if TYPE_CHECKING:
    from kernelwright.tools.sampler.contrastive import TrainConfig, TrainResult


class GCLSampler(Sampler):
    """Relational-GCN embeddings + contrastive training + K-Means (the GCL-Sampler seed).

    Args:
        k_rule: ``"bound"`` (error bound on the cheap profile signal) or ``"silhouette"``.
        representative: ``"centroid"`` (closest member) or ``"first"`` (earliest launch).
        epsilon: bound on the projected error of each cheap signal (``k_rule="bound"``): the
            time estimate ``KernelProfile.time_proxy`` and the memory sectors.
        cluster_tolerance: max relative spread of the time estimate inside a cluster.
        train: training hyper-parameters (seed included).
        weights: a saved encoder (``.pt`` from :meth:`TrainResult.save`) to load instead of
            training.
    """

    name = "gcl"

    def __init__(self, k_rule: str = "bound", representative: str = "centroid",
                 epsilon: float = 0.01, cluster_tolerance: float = 0.5,
                 train: TrainConfig | None = None, weights: str | Path | None = None,
                 seed: int = 0) -> None:  # fmt: skip
        if k_rule not in ("bound", "silhouette"):
            raise SamplerError(f"unknown k_rule {k_rule!r}; choose 'bound' or 'silhouette'")
        if representative not in ("centroid", "first"):
            raise SamplerError(
                f"unknown representative {representative!r}; choose 'centroid' or 'first'")
        self.k_rule, self.representative = k_rule, representative
        self.epsilon, self.cluster_tolerance, self.seed = epsilon, cluster_tolerance, seed
        self.train_config = train
        self._encoder = None
        self.training: TrainResult | None = None
        if weights is not None:
            from kernelwright.tools.sampler.contrastive import load_encoder

            self._encoder, self.train_config = load_encoder(weights)

    def fit(self, workloads: Sequence[WorkloadTraces]) -> TrainResult:
        """Train the encoder on the unique graphs of ``workloads`` (contrastive, no labels)."""
        from kernelwright.tools.sampler.contrastive import TrainConfig, train_encoder

        seen: dict[str, object] = {}
        for w in workloads:
            for g in w.graphs:
                seen.setdefault(g.digest, g)
        cfg = self.train_config or TrainConfig(seed=self.seed)
        self.training = train_encoder(list(seen.values()), cfg)  # type: ignore[arg-type]
        self._encoder = self.training.encoder
        return self.training

    def embed(self, traces: WorkloadTraces) -> np.ndarray:
        """Readout embedding of every unique graph of ``traces``."""
        from kernelwright.tools.sampler.contrastive import embed_graphs

        if self._encoder is None:
            self.fit([traces])
        return embed_graphs(self._encoder, traces.graphs)

    def select(self, traces: WorkloadTraces) -> Selection:
        """Cluster the invocations of ``traces`` and pick one weighted representative each."""
        self._check(traces)
        t0 = time.perf_counter()
        emb = self.embed(traces)
        t_embed = time.perf_counter() - t0
        point_of, first, mult = _unique_invocations(traces)
        pts = emb[[traces.graph_of[i] for i in first]]
        pts = (pts - pts.mean(0)) / np.maximum(pts.std(0), 1e-6)
        signal = np.array([_signals(traces.invocations[i].profile) for i in first])
        firsts = np.asarray(first)
        if self.k_rule == "bound":
            cl = choose_k_bound(pts, mult, signal, firsts, self.seed, self.epsilon,
                                self.cluster_tolerance, self.representative)  # fmt: skip
        else:
            cl = choose_k_silhouette(pts, mult, self.seed)
        reps = representatives(pts, cl.labels, firsts, self.representative)
        labels = [int(cl.labels[p]) for p in point_of]
        sizes = np.bincount(labels, minlength=max(reps) + 1)
        samples = tuple(Sample(first[p], float(sizes[lab])) for lab, p in sorted(reps.items()))
        info = {"k": len(samples), "rule": cl.rule, "rule_score": cl.score,
                "unique_invocations": len(first), "unique_graphs": len(traces.graphs),
                "embed_seconds": t_embed, "select_seconds": time.perf_counter() - t0,
                "representative": self.representative}  # fmt: skip
        return Selection(self.name, traces.name, samples, tuple(labels), info)


def _signals(p: KernelProfile) -> list[float]:
    """Cheap per-invocation signals the k bound must preserve (time estimate first)."""
    sectors = p.global_load_sectors + p.global_store_sectors + p.local_load_sectors
    return [p.time_proxy, sectors]


def _unique_invocations(traces: WorkloadTraces) -> tuple[list[int], list[int], np.ndarray]:
    """Point of every invocation, first invocation of every point, multiplicities."""
    index: dict[str, int] = {}
    point_of, first = [], []
    for inv in traces.invocations:
        p = index.setdefault(inv.trace_digest, len(index))
        if p == len(first):
            first.append(inv.index)
        point_of.append(p)
    return point_of, first, np.bincount(point_of).astype(float)
