"""Atomic read-modify-write on a typed numpy view with sequential semantics per address.

Lanes that hit the same address are serialised in lane (thread) order: each gets the value the
previous lane left. ``add`` uses a segmented prefix sum; other operations run in rounds (one lane
per distinct address per round), so the cost grows with the worst conflict, not the lane count.
"""

from __future__ import annotations

import numpy as np


def _apply(op: str, cur: np.ndarray, b: np.ndarray, c: np.ndarray | None) -> np.ndarray:
    if op == "add":
        return cur + b
    if op == "min":
        return np.minimum(cur, b)
    if op == "max":
        return np.maximum(cur, b)
    if op == "exch":
        return b
    if op == "cas":
        return np.where(cur == b, c, cur)
    if op == "and":
        return cur & b
    if op == "or":
        return cur | b
    if op == "xor":
        return cur ^ b
    if op == "inc":
        return np.where(cur >= b, 0, cur + 1).astype(cur.dtype)
    if op == "dec":
        return np.where((cur == 0) | (cur > b), b, cur - 1).astype(cur.dtype)
    raise ValueError(f"atomic operation .{op} is not supported")


_UFUNC = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
          "or": np.bitwise_or, "xor": np.bitwise_xor}  # fmt: skip


def atomic(view: np.ndarray, idx: np.ndarray, op: str, b, c=None, need_old: bool = True):
    """Apply ``op`` at ``view[idx]`` lane by lane; return the old values (or None)."""
    n = idx.size
    b = np.broadcast_to(np.asarray(b, view.dtype), (n,))
    if c is not None:
        c = np.broadcast_to(np.asarray(c, view.dtype), (n,))
    if not need_old and op in _UFUNC:
        _UFUNC[op].at(view, idx, b)
        return None
    if op == "add":
        return _atomic_add(view, idx, b)
    old = np.empty(n, view.dtype)
    remaining = np.arange(n)
    while remaining.size:
        _, first = np.unique(idx[remaining], return_index=True)
        lanes = remaining[first]
        cur = view[idx[lanes]]
        old[lanes] = cur
        view[idx[lanes]] = _apply(op, cur, b[lanes], None if c is None else c[lanes])
        remaining = np.delete(remaining, first)
    return old


def _atomic_add(view: np.ndarray, idx: np.ndarray, b: np.ndarray) -> np.ndarray:
    order = np.argsort(idx, kind="stable")
    sidx, sb = idx[order], b[order]
    start = np.ones(sidx.size, bool)
    start[1:] = sidx[1:] != sidx[:-1]
    csum = np.cumsum(sb, dtype=sb.dtype)
    excl = csum - sb
    group = np.cumsum(start) - 1
    base = excl[start][group]
    old_sorted = view[sidx] + (excl - base)
    np.add.at(view, sidx[start], np.add.reduceat(sb, np.flatnonzero(start)))
    old = np.empty_like(old_sorted)
    old[order] = old_sorted
    return old
