"""Per-warp SIMT stacks for every warp of a batch, held as numpy arrays.

Each warp has a top entry (``pc``, ``rpc``, ``mask``) and saved entries below it. A divergent
branch turns the top entry into the reconvergence entry at the branch's immediate
post-dominator (or reuses it when that is already the top's reconvergence point) and pushes one
entry per path; an entry is popped when its pc reaches its rpc or its lanes have all exited.
"""

from __future__ import annotations

import numpy as np

LANES = np.arange(32, dtype=np.int64)


def warp_bits(threads: np.ndarray | None, n_warps: int) -> np.ndarray:
    """32-bit lane masks per warp of the given thread indices (None = all threads)."""
    if threads is None:
        return np.full(n_warps, 0xFFFFFFFF, np.int64)
    w = np.bincount(threads >> 5, weights=np.left_shift(1, threads & 31).astype(np.float64),
                    minlength=n_warps)  # fmt: skip
    return w.astype(np.int64)


class SimtStacks:
    """The SIMT stacks of ``n`` warps; masks are int64 holding 32-bit lane sets."""

    def __init__(self, initial_masks: np.ndarray, exit_pc: int, depth: int = 8) -> None:
        n = initial_masks.size
        self.pc = np.zeros(n, np.int64)
        self.rpc = np.full(n, exit_pc, np.int64)
        self.mask = initial_masks.astype(np.int64)
        self.depth = np.zeros(n, np.int64)
        self.spc = np.zeros((n, depth), np.int64)
        self.srpc = np.zeros((n, depth), np.int64)
        self.smask = np.zeros((n, depth), np.int64)
        self.exit_pc = exit_pc
        self.version = 0

    def _reserve(self, extra: int) -> None:
        need = int(self.depth.max()) + extra
        if need <= self.spc.shape[1]:
            return
        grow = max(need, 2 * self.spc.shape[1]) - self.spc.shape[1]
        pad = ((0, 0), (0, grow))
        self.spc, self.srpc, self.smask = (np.pad(a, pad) for a in (self.spc, self.srpc,
                                                                      self.smask))  # fmt: skip

    def _push(self, ws: np.ndarray, pc, rpc, mask) -> None:
        d = self.depth[ws]
        self.spc[ws, d], self.srpc[ws, d], self.smask[ws, d] = pc, rpc, mask
        self.depth[ws] = d + 1

    def diverge(self, ws, taken, not_taken, branch_pc: int, target: int, reconv: int) -> None:
        """Split warps ``ws`` at a branch into taken/not-taken paths reconverging at ``reconv``."""
        self.version += 1
        self._reserve(3)
        keep = self.rpc[ws] != reconv
        kw = ws[keep]
        self._push(kw, reconv, self.rpc[kw], self.mask[kw])
        paths = [
            (pc, m) for pc, m in ((target, taken), (branch_pc + 1, not_taken)) if pc != reconv
        ]
        if not paths:
            self.pc[ws] = branch_pc + 1
            return
        for pc, m in paths[:-1]:
            self._push(ws, pc, reconv, m)
        self.pc[ws], self.rpc[ws], self.mask[ws] = paths[-1][0], reconv, paths[-1][1]

    def exit_lanes(self, ws: np.ndarray, bits: np.ndarray) -> None:
        """Lanes ``bits`` of warps ``ws`` have exited: drop them from every stack entry."""
        self.version += 1
        self.mask[ws] &= ~bits
        self.smask[ws] &= ~bits[:, None]
        self.pc[ws] += 1

    def settle(self, ws: np.ndarray) -> None:
        """Pop entries that reached their reconvergence pc or have no lanes left."""
        while ws.size:
            need = (
                (self.mask[ws] == 0)
                | (self.pc[ws] == self.rpc[ws])
                | (self.pc[ws] >= self.exit_pc)
            )
            ws = ws[need]
            if not ws.size:
                return
            self.version += 1
            ending = self.depth[ws] == 0
            self.mask[ws[ending]] = 0
            ws = ws[~ending]
            d = self.depth[ws] - 1
            self.depth[ws] = d
            self.pc[ws], self.rpc[ws], self.mask[ws] = (self.spc[ws, d], self.srpc[ws, d],
                                                        self.smask[ws, d])  # fmt: skip

    def threads(self, ws: np.ndarray, full_mask: int) -> np.ndarray | None:
        """Thread indices of the active lanes of warps ``ws`` (None: every thread, all active)."""
        m = self.mask[ws]
        if ws.size == self.pc.size and (m == full_mask).all() and full_mask == 0xFFFFFFFF:
            return None
        lanes = ((m[:, None] >> LANES) & 1).astype(bool)
        return (ws[:, None] * 32 + LANES)[lanes]
