"""Memory-system pieces of the timing model: sectored LRU caches and vectorised coalescing.

Coalescing and bank-conflict counting run once per thread block over all of its memory
instructions with numpy (no per-lane Python loops); the caches are looked up per 128-byte line
with a 4-bit sector mask.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import chain

import numpy as np

SECTOR_SHIFT = 5  # 32-byte sectors
LINE_SHIFT = 7  # 128-byte lines: 4 sectors
_INST_SHIFT = 43  # key = inst << 43 | sector (sector ids of 48-bit addresses fit in 43 bits)
_SECTOR_MASK = np.uint64((1 << _INST_SHIFT) - 1)
_WORD_SHIFT = 40
_WORD_MASK = np.uint64((1 << _WORD_SHIFT) - 1)
NUM_BANKS = 32


class SectorCache:
    """A set-associative, LRU, sectored cache of 128-byte lines (4 x 32-byte sectors).

    Each set is a dict ``line -> valid | dirty << 4`` kept in LRU order (insertion order); sets
    are created when first touched, so a 50 MB L2 costs nothing for a small kernel.
    """

    def __init__(self, size_bytes: int, assoc: int, line_bytes: int = 128) -> None:
        self.assoc = max(1, assoc)
        self.num_sets = max(1, size_bytes // (line_bytes * self.assoc))
        self.sets: defaultdict[int, dict[int, int]] = defaultdict(dict)  # created when touched
        self.evicted_dirty = 0  # dirty sectors evicted by the last access

    def __repr__(self) -> str:
        return f"SectorCache(sets={self.num_sets}, assoc={self.assoc})"

    def access(self, line: int, mask: int, write: bool = False) -> int:
        """Look up ``mask`` sectors of ``line``; allocate them; return the missing sectors.

        Writes allocate without fetching and mark the sectors dirty.
        """
        s = self.sets[(line ^ (line >> 13)) % self.num_sets]
        v = s.pop(line, None)
        if v is None:
            if len(s) >= self.assoc:
                self.evicted_dirty = (s.pop(next(iter(s))) >> 4).bit_count()
            else:
                self.evicted_dirty = 0
            s[line] = (mask | mask << 4) if write else mask
            return mask
        self.evicted_dirty = 0
        s[line] = (v | mask | mask << 4) if write else (v | mask)
        return mask & ~v & 0xF


    def clean(self) -> int:
        """Mark every sector clean (written back); returns how many were dirty."""
        dirty = 0
        for s in self.sets.values():
            for line, v in s.items():
                if v >> 4:
                    dirty += (v >> 4).bit_count()
                    s[line] = v & 0xF
        return dirty


def coalesce(addr_lists: list[tuple[int, ...]], widths: list[int]) -> list[list[tuple[int, int]]]:
    """Group each instruction's lane addresses into 128-byte lines with 32-byte sector masks.

    Args:
        addr_lists: per instruction, the active lanes' byte addresses.
        widths: per instruction, bytes accessed per lane.

    Returns:
        Per instruction, ``[(line, sector_mask), ...]`` sorted by line.
    """
    lines, masks, bounds = coalesce_flat(addr_lists, widths)
    pairs = list(zip(lines.tolist(), masks.tolist(), strict=True))
    b = bounds.tolist()
    return [pairs[b[i]:b[i + 1]] for i in range(len(addr_lists))]


def coalesce_flat(addr_lists: list[tuple[int, ...]], widths: list[int]
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`coalesce` as flat arrays: ``lines``, ``masks`` (int64) and ``bounds``.

    Instruction ``i``'s lines are ``lines[bounds[i]:bounds[i + 1]]``, sorted.
    """
    n = len(addr_lists)
    counts = np.fromiter(map(len, addr_lists), dtype=np.int64, count=n)
    total = int(counts.sum())
    if total == 0:
        empty = np.zeros(0, np.int64)
        return empty, empty, np.zeros(n + 1, np.int64)
    addrs = _addresses(addr_lists, total)
    inst = np.repeat(np.arange(n, dtype=np.uint64), counts) << np.uint64(_INST_SHIFT)
    span = np.repeat(np.maximum(np.asarray(widths, dtype=np.uint64), 1), counts) - np.uint64(1)
    first = addrs >> np.uint64(SECTOR_SHIFT)
    last = (addrs + span) >> np.uint64(SECTOR_SHIFT)
    parts = [inst | (first & _SECTOR_MASK)]
    extra = last - first
    for k in range(1, int(extra.max()) + 1):  # accesses that straddle sectors (rare)
        sel = extra >= k
        parts.append(inst[sel] | ((first[sel] + np.uint64(k)) & _SECTOR_MASK))
    keys = _sorted_unique(_drop_repeats(np.concatenate(parts) if len(parts) > 1 else parts[0]))
    line_keys = keys >> np.uint64(LINE_SHIFT - SECTOR_SHIFT)
    starts = np.flatnonzero(np.r_[True, line_keys[1:] != line_keys[:-1]])
    bits = np.left_shift(np.uint64(1), keys & np.uint64(3))
    masks = np.bitwise_or.reduceat(bits, starts).astype(np.int64)
    heads = line_keys[starts]
    owners = (heads >> np.uint64(_INST_SHIFT - 2)).astype(np.int64)
    lines = (heads & np.uint64((1 << (_INST_SHIFT - 2)) - 1)).astype(np.int64)
    bounds = np.searchsorted(owners, np.arange(n + 1)).astype(np.int64)
    return lines, masks, bounds


def shared_wavefronts(addr_lists: list[tuple[int, ...]], widths: list[int]) -> list[int]:
    """Shared-memory wavefronts per instruction: the most distinct 4-byte words in one bank.

    32 banks of 4 bytes; lanes reading the same word are served together (broadcast). A warp
    reading 16 bytes per lane needs at least 4 wavefronts. Instructions without active lanes
    count as one wavefront.
    """
    n = len(addr_lists)
    counts = np.fromiter(map(len, addr_lists), dtype=np.int64, count=n)
    total = int(counts.sum())
    if total == 0:
        return [1] * n
    addrs = _addresses(addr_lists, total)
    inst = np.repeat(np.arange(n, dtype=np.uint64), counts) << np.uint64(_WORD_SHIFT)
    nwords = np.repeat(np.maximum(np.asarray(widths, dtype=np.int64) // 4, 1), counts)
    words = addrs >> np.uint64(2)
    parts = [inst | (words & _WORD_MASK)]
    for k in range(1, int(nwords.max())):
        sel = nwords > k
        parts.append(inst[sel] | ((words[sel] + np.uint64(k)) & _WORD_MASK))
    keys = _sorted_unique(_drop_repeats(np.concatenate(parts) if len(parts) > 1 else parts[0]))
    owner = (keys >> np.uint64(_WORD_SHIFT)).astype(np.int64)
    bank_keys = owner * NUM_BANKS + (keys & np.uint64(NUM_BANKS - 1)).astype(np.int64)
    bank_keys.sort()
    starts = np.flatnonzero(np.r_[True, bank_keys[1:] != bank_keys[:-1]])
    uniq, per_bank = bank_keys[starts], np.diff(np.r_[starts, len(bank_keys)])
    owners = uniq // NUM_BANKS  # sorted: one group of banks per instruction
    first = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
    waves = np.ones(n, dtype=np.int64)
    waves[owners[first]] = np.maximum.reduceat(per_bank, first)
    return waves.tolist()


def _addresses(addr_lists: list[tuple[int, ...]], total: int) -> np.ndarray:
    """All lane addresses as one uint64 array (read as int64: twice as fast from Python ints)."""
    return np.fromiter(chain.from_iterable(addr_lists), dtype=np.int64, count=total).view(
        np.uint64)


def _drop_repeats(a: np.ndarray) -> np.ndarray:
    """Drop elements equal to their predecessor (neighbouring lanes share sectors), so the
    sort that follows has far fewer keys; the set of values is unchanged."""
    return a[np.r_[True, a[1:] != a[:-1]]] if len(a) > 1 else a


def _sorted_unique(a: np.ndarray) -> np.ndarray:
    """Sorted unique values (sorting beats numpy's hash-based ``unique`` on uint64 keys)."""
    a.sort()
    return a[np.r_[True, a[1:] != a[:-1]]] if len(a) else a
