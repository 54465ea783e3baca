"""Warp-collective instructions: shfl.sync, vote.sync, activemask, redux.sync.

Executed for all selected threads at once: a lane's warp is ``thread // 32``; per-warp
reductions use ``bincount`` over warp ids, so no Python loop runs per warp or per thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kernelwright.tools.gpusim._operands import fetcher, writer
from kernelwright.tools.gpusim._types import convert, dtype_of
from kernelwright.tools.gpusim.ptx import Instruction

U32 = np.dtype(np.uint32)
BOOL = np.dtype(bool)


def build_warp_op(ins: Instruction) -> Callable:
    if ins.base == "shfl":
        return _shfl(ins)
    if ins.base == "vote":
        return _vote(ins)
    if ins.base == "activemask":
        put = writer(ins.operands[0])
        return lambda st, sel: put(st, sel, _ballot(st, sel, None))
    return _redux(ins)


def _threads(st, sel) -> np.ndarray:
    return np.arange(st.T) if sel is None else sel


def _ballot(st, sel, pred) -> np.ndarray:
    """Per selected thread: the 32-bit mask of selected lanes of its warp where ``pred``."""
    t = _threads(st, sel)
    w = t >> 5
    bits = np.left_shift(1, t & 31).astype(np.float64)
    if pred is not None:
        bits = bits * np.broadcast_to(pred, t.shape)
    per_warp = np.bincount(w, weights=bits, minlength=st.W)
    return per_warp.astype(np.uint64).astype(U32)[w]


def _shfl(ins: Instruction) -> Callable:
    mode = next(m for m in ins.mods if m in ("up", "down", "bfly", "idx"))
    dst = ins.operands[0]
    put_d = writer(dst.items[0] if dst.kind == "pair" else dst)
    put_p = writer(dst.items[1]) if dst.kind == "pair" else None
    a_name = ins.operands[1]
    b = fetcher(ins.operands[2], U32)
    c = fetcher(ins.operands[3], U32)
    dt = dtype_of(ins.types[-1])
    a_full = fetcher(a_name, dt)

    def run(st, sel):
        t = _threads(st, sel)
        lane = (t & 31).astype(np.int64)
        bval = np.asarray(b(st, sel)).astype(np.int64) & 31
        cv = np.asarray(c(st, sel)).astype(np.int64)
        cval, seg = cv & 31, (cv >> 8) & 31
        max_lane = (lane & seg) | (cval & ~seg)
        if mode == "up":
            j = lane - bval
            ok = j >= max_lane
        else:
            j = {"down": lambda: lane + bval, "bfly": lambda: lane ^ bval,
                 "idx": lambda: (lane & seg) | (bval & ~seg)}[mode]()  # fmt: skip
            ok = j <= max_lane
        src = t - lane + np.where(ok, j, lane)
        put_d(st, sel, np.asarray(a_full(st, None))[src])
        if put_p is not None:
            put_p(st, sel, np.broadcast_to(ok, t.shape).copy())

    return run


def _vote(ins: Instruction) -> Callable:
    mode = next(m for m in ins.mods if m in ("any", "all", "uni", "ballot"))
    put = writer(ins.operands[0])
    src = ins.operands[1]
    p = fetcher(src, BOOL)

    def run(st, sel):
        pv = p(st, sel)
        yes = _ballot(st, sel, pv)
        if mode == "ballot":
            put(st, sel, yes)
            return
        everyone = _ballot(st, sel, None)
        out = {"any": lambda: yes != 0, "all": lambda: yes == everyone,
               "uni": lambda: (yes == 0) | (yes == everyone)}[mode]()  # fmt: skip
        put(st, sel, out)

    return run


def _redux(ins: Instruction) -> Callable:
    op = next(m for m in ins.mods if m in ("add", "min", "max", "and", "or", "xor"))
    dt = dtype_of(ins.types[-1])
    get = fetcher(ins.operands[1], dt)
    put = writer(ins.operands[0])
    ufunc = {"min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or,
             "xor": np.bitwise_xor}.get(op)  # fmt: skip

    def run(st, sel):
        t = _threads(st, sel)
        w = t >> 5
        v = np.broadcast_to(get(st, sel), t.shape)
        if op == "add":
            acc = np.zeros(st.W, np.int64)
            np.add.at(acc, w, v.astype(np.int64))
            res = convert(acc.astype(np.uint64).astype(np.uint32), U32).view(dt)
        else:
            init = {"min": np.iinfo(dt).max, "max": np.iinfo(dt).min, "and": -1}.get(op, 0)
            res = np.full(st.W, init).astype(dt)
            ufunc.at(res, w, v)
        put(st, sel, res[w])

    return run
