"""K-Means on invocation embeddings, the choice of k without ground truth, and representatives.

Two rules choose k; neither reads the cycles a sampler is scored against:

* ``silhouette`` - the k in ``2..k_max`` with the highest mean silhouette coefficient
  ``s = (b - a) / max(a, b)`` (a: mean distance to the own cluster, b: to the nearest other).
* ``bound`` - the smallest k whose representatives project every cheap profile signal ``c_i``
  (columns: a time estimate, thread instructions, memory sectors - all from the trace) within
  ``epsilon``: ``|sum_i c_i - sum_s w_s c_s| / sum_i c_i <= epsilon``, and whose clusters keep
  the time estimate within ``cluster_tolerance`` of their representative's,
  ``max_{i in C} |c_i - c_s| / c_s``. k grows geometrically (x1.1) until both hold.

Points are unique graphs with multiplicities (``sample_weight`` in K-Means), so identical
invocations always share a cluster. Representative of a cluster: the member closest to the
centroid (``centroid``) or the first in launch order (``first``); weight = cluster size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.cluster import KMeans
from sklearn.metrics import silhouette_score


@dataclass(frozen=True)
class Clustering:
    """Labels per point, k, and how k was chosen."""

    labels: np.ndarray
    k: int
    rule: str
    score: float  # silhouette, or the achieved bound on the profile signal


def kmeans(points: np.ndarray, k: int, weights: np.ndarray | None, seed: int) -> np.ndarray:
    """K-Means labels (k-means++ init, 3 restarts, seeded)."""
    k = min(k, len(np.unique(points, axis=0)))
    if k <= 1:
        return np.zeros(len(points), int)
    km = KMeans(n_clusters=k, n_init=3, random_state=seed)
    return km.fit_predict(points, sample_weight=weights)


def choose_k_silhouette(points: np.ndarray, weights: np.ndarray, seed: int,
                        k_max: int = 40) -> Clustering:  # fmt: skip
    """The k in 2..k_max with the best silhouette (on unique points)."""
    n = len(points)
    if n < 3:
        return Clustering(np.arange(n), n, "silhouette", 1.0)
    best = Clustering(np.zeros(n, int), 1, "silhouette", -1.0)
    for k in range(2, min(k_max, n - 1) + 1):
        labels = kmeans(points, k, weights, seed)
        if len(set(labels)) < 2:
            continue
        s = float(silhouette_score(points, labels))
        if s > best.score:
            best = Clustering(labels, k, "silhouette", s)
    return best


def choose_k_bound(points: np.ndarray, weights: np.ndarray, signal: np.ndarray,
                   first: np.ndarray, seed: int, epsilon: float = 0.001,
                   cluster_tolerance: float = 0.05,
                   how: str = "centroid") -> Clustering:  # fmt: skip
    """Smallest k (geometric sweep) whose representatives bound the profile-signal error.

    Args:
        points: unique embeddings; weights: their multiplicities; signal: cheap cost per point;
        first: launch index of each point's first occurrence (for ``how="first"``).
    """
    n, k = len(np.unique(points, axis=0)), 1
    while True:
        labels = kmeans(points, k, weights, seed)
        reps = representatives(points, labels, first, how)
        err, spread = _signal_error(labels, reps, weights, signal)
        if (err <= epsilon and spread <= cluster_tolerance) or k >= n:
            return Clustering(labels, len(set(labels)), "bound", err)
        k = min(n, max(k + 1, int(k * 1.1)))


def _signal_error(labels, reps, weights, signal) -> tuple[float, float]:
    """Worst projected error over the signal's columns, and the worst in-cluster spread of the
    first column (the time estimate)."""
    sig = signal.reshape(len(signal), -1)
    total = weights @ sig
    projected = np.zeros(sig.shape[1])
    spread = 0.0
    for lab, rep in reps.items():
        members = labels == lab
        projected += float(weights[members].sum()) * sig[rep]
        dev = np.abs(sig[members, 0] - sig[rep, 0]) / max(sig[rep, 0], 1e-12)
        spread = max(spread, float(dev.max()))
    err = np.abs(total - projected) / np.maximum(total, 1e-12)
    return float(err.max()), spread


def representatives(points: np.ndarray, labels: np.ndarray, first: np.ndarray,
                    how: str = "centroid") -> dict[int, int]:  # fmt: skip
    """Point index representing each cluster: closest to the centroid, or earliest launch."""
    reps: dict[int, int] = {}
    for lab in np.unique(labels):
        members = np.flatnonzero(labels == lab)
        if how == "first":
            reps[int(lab)] = int(members[np.argmin(first[members])])
        else:
            centre = points[members].mean(axis=0)
            d = np.linalg.norm(points[members] - centre, axis=1)
            reps[int(lab)] = int(members[np.lexsort((first[members], d))[0]])
    return reps
