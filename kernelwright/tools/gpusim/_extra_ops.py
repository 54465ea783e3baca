"""Less common PTX instructions: bf16 conversions, funnel shifts, dp4a/dp2a, cp.async."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kernelwright.tools.gpusim._mem_ops import address
from kernelwright.tools.gpusim._types import dtype_of
from kernelwright.tools.gpusim.ptx import Instruction

U16, U32, U64 = np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64)


def f32_to_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 to bfloat16 bits (round to nearest even; NaN stays NaN)."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(np.asarray(x, np.float32))
    return np.where(nan, 0x7FC0, rounded).astype(np.uint16)


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def cvt_bf16(ins: Instruction) -> tuple[Callable, list[np.dtype]]:
    """(function, source dtypes) for ``cvt`` with a bf16 side."""
    dst, src = ins.types[0], ins.types[1]
    if dst == "bf16" and src == "bf16":
        return (lambda a: a), [U16]
    if dst == "bf16":
        return (lambda a: f32_to_bf16(np.asarray(a).astype(np.float32))), [dtype_of(src)]
    out = dtype_of(dst)
    if out.kind != "f":
        raise ValueError(f"cvt from bf16 to .{dst} is not supported")
    return (lambda a: bf16_to_f32(a).astype(out)), [U16]


def shf(ins: Instruction) -> tuple[Callable, list[np.dtype]]:
    """``shf.{l,r}.{wrap,clamp}.b32 d, a, b, c``: funnel shift of the 64-bit value b:a."""
    left, wrap = "l" in ins.mods, "wrap" in ins.mods

    def run(a, b, c):
        pair = (np.asarray(b).astype(np.uint64) << np.uint64(32)) | np.asarray(a).astype(np.uint64)
        c = np.asarray(c).astype(np.uint64)
        n = c & np.uint64(31) if wrap else np.minimum(c, np.uint64(32))
        if left:
            return ((pair << n) >> np.uint64(32)).astype(np.uint32)
        return (pair >> n).astype(np.uint32)

    return run, [U32, U32, U32]


def dp(ins: Instruction) -> tuple[Callable, list[np.dtype]]:
    """``dp4a`` / ``dp2a.{lo,hi}``: byte (or half-word x byte) dot products plus c."""
    ta, tb = ins.types[0], ins.types[1]
    sa = np.int8 if ta == "s32" else np.uint8
    sb = np.int8 if tb == "s32" else np.uint8
    if ins.base == "dp4a":

        def dp4a(a, b, c):
            va = np.asarray(a).astype(np.uint32).view(sa).reshape(-1, 4).astype(np.int64)
            vb = np.asarray(b).astype(np.uint32).view(sb).reshape(-1, 4).astype(np.int64)
            return ((va * vb).sum(1) + np.asarray(c).astype(np.int64)).astype(np.uint32)

        return dp4a, [U32, U32, U32]
    ha = np.int16 if ta == "s32" else np.uint16
    hi = "hi" in ins.mods

    def dp2a(a, b, c):
        va = np.asarray(a).astype(np.uint32).view(ha).reshape(-1, 2).astype(np.int64)
        vb = np.asarray(b).astype(np.uint32).view(sb).reshape(-1, 4).astype(np.int64)
        vb = vb[:, 2:] if hi else vb[:, :2]
        return ((va * vb).sum(1) + np.asarray(c).astype(np.int64)).astype(np.uint32)

    return dp2a, [U32, U32, U32]


def cp_async(ins: Instruction) -> Callable:
    """``cp.async.{ca,cg}.shared.global [dst], [src], size{, src_size}`` done synchronously.

    Completing the copy at issue is a valid schedule: the program may only read the data
    after ``cp.async.wait_group``/``wait_all``, which are no-ops here.
    """
    dst, src, size_op = ins.operands[:3]
    if size_op.kind != "int":
        raise ValueError("cp.async with a register copy size is not supported")
    size = int(size_op.value)
    get_dst, get_src = address(dst), address(src)
    src_size = ins.operands[3] if len(ins.operands) > 3 else None
    lanes = np.arange(size, dtype=np.uint64)

    def run(st, sel):
        n = st.count(sel)
        d = np.broadcast_to(get_dst(st, sel), (n,))
        s = np.broadcast_to(get_src(st, sel), (n,))
        data = st.load("global", (s[:, None] + lanes).reshape(-1), np.dtype(np.uint8), sel, size)
        data = data.reshape(n, size)
        if src_size is not None and src_size.kind == "int":
            data[:, int(src_size.value) :] = 0
        st.store("shared", (d[:, None] + lanes).reshape(-1), data.reshape(-1), sel, size)

    return run
