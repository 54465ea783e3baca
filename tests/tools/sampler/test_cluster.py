"""Choosing k without ground truth, and the two kinds of representative."""

from __future__ import annotations

import numpy as np

from kernelwright.tools.sampler.cluster import (
    choose_k_bound,
    choose_k_silhouette,
    representatives,
)


def _blobs(seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0, 0], [10, 0], [0, 10]])
    pts = np.concatenate([c + rng.normal(0, 0.3, (20, 2)) for c in centres])
    signal = np.concatenate([np.full(20, v) for v in (100.0, 1000.0, 5000.0)])
    return pts, signal + rng.normal(0, 1.0, 60)


def test_silhouette_finds_three_blobs():
    pts, _ = _blobs()
    cl = choose_k_silhouette(pts, np.ones(60), seed=0, k_max=8)
    assert cl.k == 3 and cl.score > 0.8


def test_bound_meets_the_profile_error_bound():
    pts, signal = _blobs()
    first = np.arange(60)
    cl = choose_k_bound(pts, np.ones(60), signal, first, seed=0, epsilon=0.001,
                        cluster_tolerance=0.05)  # fmt: skip
    reps = representatives(pts, cl.labels, first, "centroid")
    projected = sum(signal[r] * np.sum(cl.labels == lab) for lab, r in reps.items())
    assert abs(projected - signal.sum()) / signal.sum() <= 0.001
    assert cl.k >= 3


def test_first_and_centroid_representatives_differ_as_defined():
    pts = np.array([[0.0], [1.0], [2.0], [10.0]])
    labels = np.array([0, 0, 0, 1])
    first = np.array([5, 1, 7, 3])
    assert representatives(pts, labels, first, "first") == {0: 1, 1: 3}
    assert representatives(pts, labels, first, "centroid") == {0: 1, 1: 3}
    first = np.array([0, 4, 2, 3])
    assert representatives(pts, labels, first, "first")[0] == 0
    assert representatives(pts, labels, first, "centroid")[0] == 1
