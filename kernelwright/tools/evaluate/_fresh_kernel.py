"""The compiled refresh pass of :mod:`freshness` (numba; imported only by the orchestrator)."""

from __future__ import annotations

import numpy as np
from numba import njit


def scale_by_hashed_bytes(base: np.ndarray, ref: np.ndarray, cand: np.ndarray, seed: int,
                          span: float, levels: int) -> None:
    """``ref[i] = cand[i] = base[i] * factor(i)``: a factor in ``[1 - span, 1 + span]``, one
    of ``levels`` (at most 256) evenly spaced values, picked by the low byte of a murmur3-style
    mix of ``i`` and the two halves of the 64-bit ``seed``."""
    dtype = base.dtype.type
    _scale(base, ref, cand, np.uint32(seed & 0xFFFFFFFF), np.uint32(seed >> 32 & 0xFFFFFFFF),
           dtype(1 - span), dtype(2 * span / (levels - 1)), np.uint32(levels - 1))


@njit(cache=True, nogil=True)
def _scale(base, ref, cand, key1, key2, lo, step, mask):  # pragma: no cover - compiled
    # independent per element (no carried generator state), so the loop vectorises
    for i in range(base.size):
        h = np.uint32(i) * np.uint32(0x9E3779B1) + key1
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x85EBCA6B)
        h ^= key2
        h ^= h >> np.uint32(13)
        h *= np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
        v = base[i] * (lo + step * np.float32(h & mask))  # the byte is exact in float32
        ref[i] = v
        cand[i] = v
