"""Vectorised coalescing and bank-conflict counting against a lane-by-lane Python count."""

from __future__ import annotations

import numpy as np

from kernelwright.tools.gpusim._memsys import coalesce, shared_wavefronts


def _random_accesses(seed: int) -> tuple[list[tuple[int, ...]], list[int]]:
    rng = np.random.default_rng(seed)
    lists, widths = [], []
    for _ in range(300):
        lanes = int(rng.integers(0, 33))
        width = int(rng.choice([1, 2, 4, 8, 16]))
        kind = rng.integers(0, 3)
        base = int(rng.integers(0, 1 << 20)) * 4
        if kind == 0:  # strided
            addrs = [base + i * int(rng.choice([0, 4, 8, 128])) for i in range(lanes)]
        elif kind == 1:  # scattered
            addrs = [int(a) for a in rng.integers(0, 4096, lanes) * width]
        else:  # broadcast and repeats
            addrs = [base + 4 * int(a) for a in rng.integers(0, 3, lanes)]
        lists.append(tuple(addrs))
        widths.append(width)
    return lists, widths


def test_coalesce_matches_a_lane_by_lane_count():
    lists, widths = _random_accesses(1)
    for got, addrs, w in zip(coalesce(lists, widths), lists, widths, strict=True):
        sectors = {s for a in addrs for s in range(a >> 5, (a + max(w, 1) - 1 >> 5) + 1)}
        want: dict[int, int] = {}
        for s in sectors:
            want[s >> 2] = want.get(s >> 2, 0) | 1 << (s & 3)
        assert got == sorted(want.items())


def test_shared_wavefronts_match_a_lane_by_lane_count():
    lists, widths = _random_accesses(2)
    for got, addrs, w in zip(shared_wavefronts(lists, widths), lists, widths, strict=True):
        words = {(a >> 2) + k for a in addrs for k in range(max(w // 4, 1))}
        per_bank = [sum(1 for x in words if x % 32 == b) for b in range(32)]
        assert got == max(1, *per_bank)


def test_compiled_wavefronts_match_the_numpy_ones():
    from kernelwright.tools.gpusim._timing_kernels import shared_wavefronts_flat

    lists, widths = _random_accesses(3)
    counts = np.array([len(a) for a in lists], np.int64)
    flat = np.array([a for addrs in lists for a in addrs], np.int64)
    got = shared_wavefronts_flat(flat, counts, np.array(widths, np.int64)).tolist()
    assert got == shared_wavefronts(lists, widths)
