"""Vectorised PTX arithmetic: one builder per opcode family, each returning ``f(*srcs) -> dst``.

Every builder receives the parsed instruction and the numpy dtype of its type suffix; the
returned function works on whole arrays of lanes (never a Python loop per thread).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kernelwright.tools.gpusim._types import FLOATS, SIGNED, UNSIGNED
from kernelwright.tools.gpusim.ptx import Instruction

Fn = Callable[..., np.ndarray]
_ROUND = {"rm": -np.inf, "rp": np.inf}
_ERR = {"all": "ignore"}


def round_to(x64: np.ndarray, dt: np.dtype, mode: str | None) -> np.ndarray:
    """Round float64 values to ``dt`` with PTX rounding ``mode`` (rn/rz/rm/rp)."""
    r = np.asarray(x64).astype(dt)
    if dt.itemsize == 8 or mode in (None, "rn"):
        return r
    back = r.astype(np.float64)
    if mode == "rz":
        fix = np.abs(back) > np.abs(x64)
        return np.where(fix, np.nextafter(r, dt.type(0)), r)
    fix = back > x64 if mode == "rm" else back < x64
    return np.where(fix, np.nextafter(r, dt.type(_ROUND[mode])), r)


def _mode(ins: Instruction) -> str | None:
    return next((m for m in ins.mods if m in ("rn", "rz", "rm", "rp")), None)


def _sat(ins: Instruction, fn: Fn, dt: np.dtype) -> Fn:
    if "sat" not in ins.mods:
        return fn
    if dt.kind == "f":
        return lambda *a: np.nan_to_num(np.clip(fn(*a), 0, 1), nan=0.0).astype(dt)
    wide = np.int64
    info = np.iinfo(dt)
    return lambda *a: np.clip(fn(*(x.astype(wide) for x in a)), info.min, info.max).astype(dt)


def _float_op(ins: Instruction, dt: np.dtype, op: Fn, nargs: int) -> Fn:
    mode = _mode(ins)
    if dt.kind != "f" or mode in (None, "rn") or dt.itemsize == 8:
        return op
    return lambda *a: round_to(op(*(x.astype(np.float64) for x in a)), dt, mode)


def _fma(dt: np.dtype, mode: str | None) -> Fn:
    if dt.itemsize == 8:
        return lambda a, b, c: a * b + c
    return lambda a, b, c: round_to(
        a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64), dt, mode
    )


def _mul_hi(dt: np.dtype) -> Fn:
    if dt.itemsize < 8:
        wide = np.dtype(SIGNED[8] if dt.kind == "i" else UNSIGNED[8])
        bits = 8 * dt.itemsize
        return lambda a, b: ((a.astype(wide) * b.astype(wide)) >> bits).astype(dt)

    def hi64(a, b):
        ua, ub = a.view(np.uint64), b.view(np.uint64)
        m = np.uint64(0xFFFFFFFF)
        a0, a1, b0, b1 = ua & m, ua >> np.uint64(32), ub & m, ub >> np.uint64(32)
        mid = (a0 * b0 >> np.uint64(32)) + (a1 * b0 & m) + a0 * b1
        hi = a1 * b1 + (a1 * b0 >> np.uint64(32)) + (mid >> np.uint64(32))
        if dt.kind == "i":
            hi = (
                hi
                - np.where(a < 0, ub, 0).astype(np.uint64)
                - np.where(b < 0, ua, 0).astype(np.uint64)
            )
        return hi.view(dt)

    return hi64


def _wide(dt: np.dtype) -> np.dtype:
    return np.dtype((SIGNED if dt.kind == "i" else UNSIGNED)[2 * dt.itemsize])


def build_mul(ins: Instruction, dt: np.dtype) -> Fn:
    if dt.kind == "f":
        return _sat(ins, _float_op(ins, dt, lambda a, b: a * b, 2), dt)
    if "hi" in ins.mods:
        return _mul_hi(dt)
    if "wide" in ins.mods:
        w = _wide(dt)
        return lambda a, b: a.astype(w) * b.astype(w)
    return lambda a, b: a * b


def build_mad(ins: Instruction, dt: np.dtype) -> Fn:
    if dt.kind == "f":
        return _sat(ins, _fma(dt, _mode(ins)), dt)
    if "hi" in ins.mods:
        hi = _mul_hi(dt)
        return lambda a, b, c: hi(a, b) + c
    if "wide" in ins.mods:
        w = _wide(dt)
        return lambda a, b, c: a.astype(w) * b.astype(w) + c
    return lambda a, b, c: a * b + c


def _int_div(a, b):
    safe = np.where(b == 0, 1, b).astype(b.dtype)
    q = (a - np.fmod(a, safe)) // safe
    return np.where(b == 0, np.array(-1).astype(a.dtype), q).astype(a.dtype)


def _int_rem(a, b):
    safe = np.where(b == 0, 1, b).astype(b.dtype)
    return np.where(b == 0, a, np.fmod(a, safe)).astype(a.dtype)


def _shift(left: bool) -> Fn:
    def shift(a, b):
        bits = 8 * a.dtype.itemsize
        n = np.minimum(np.asarray(b).astype(np.uint32), bits - 1).astype(a.dtype)
        out = (a << n) if left else (a >> n)
        big = np.asarray(b).astype(np.uint32) >= bits
        if not big.any():
            return out
        fill = (a >> n) if (not left and a.dtype.kind == "i") else np.zeros_like(out)
        return np.where(big, fill, out).astype(a.dtype)

    return shift


def _bit_length(u: np.ndarray) -> np.ndarray:
    if u.dtype.itemsize == 8:
        hi = (u >> np.uint64(32)).astype(np.uint32)
        lo = (u & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        return np.where(hi > 0, _bit_length(hi) + 32, _bit_length(lo))
    return np.frexp(u.astype(np.float64))[1].astype(np.uint32)


def _clz(a):
    u = a.view(UNSIGNED[a.dtype.itemsize])
    return (8 * a.dtype.itemsize - _bit_length(u)).astype(np.uint32)


def _bfind(a):
    u = a.view(UNSIGNED[a.dtype.itemsize])
    if a.dtype.kind == "i":
        u = np.where(a < 0, ~u, u)
    n = _bit_length(u).astype(np.int64) - 1
    return np.where(n < 0, 0xFFFFFFFF, n).astype(np.uint32)


_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], np.uint8)


def _brev(a):
    b = _REV8[a.view(np.uint8).reshape(-1, a.dtype.itemsize)][:, ::-1]
    return np.ascontiguousarray(b).view(a.dtype).reshape(-1)


def _bfe(a, pos, length):
    bits = 8 * a.dtype.itemsize
    p = np.minimum(pos.astype(np.int64) & 0xFF, bits)
    ln = np.minimum(length.astype(np.int64) & 0xFF, bits)
    u = a.view(UNSIGNED[a.dtype.itemsize]).astype(np.uint64)
    field = (u >> np.minimum(p, 63).astype(np.uint64)) & ((np.uint64(1) << ln.astype(np.uint64))
                                                         - np.uint64(1))  # fmt: skip
    field = np.where(ln >= 64, u >> np.minimum(p, 63).astype(np.uint64), field)
    if a.dtype.kind == "i":
        sign_bit = np.minimum(p + ln - 1, bits - 1)
        neg = ((u >> sign_bit.astype(np.uint64)) & np.uint64(1)).astype(bool) & (ln > 0)
        field = np.where(neg, field | ~((np.uint64(1) << ln.astype(np.uint64)) - np.uint64(1)),
                         field)  # fmt: skip
    return field.astype(UNSIGNED[a.dtype.itemsize]).view(a.dtype)


def _bfi(a, b, pos, length):
    u = np.uint64
    ut = UNSIGNED[b.dtype.itemsize]
    p = (pos.astype(np.int64) & 0xFF).astype(u)
    mask = ((u(1) << (length.astype(np.int64) & 0xFF).astype(u)) - u(1)) << p
    ua, ub = a.view(ut).astype(u), b.view(ut).astype(u)
    return ((ub & ~mask) | ((ua << p) & mask)).astype(ut).view(b.dtype)


def _prmt(a, b, c):
    src = np.stack([a.view(np.uint32), b.view(np.uint32)], axis=-1)
    bytes8 = np.ascontiguousarray(src).view(np.uint8).reshape(-1, 8)
    sel = c.view(np.uint32).astype(np.int64)
    out = np.zeros((bytes8.shape[0], 4), np.uint8)
    rows = np.arange(bytes8.shape[0])
    for i in range(4):
        nib = (sel >> (4 * i)) & 0xF
        byte = bytes8[rows, nib & 7]
        sign = (nib & 8).astype(bool)
        out[:, i] = np.where(sign, np.where(byte & 0x80, 0xFF, 0), byte)
    return out.view(np.uint32).reshape(-1)


def _lop3(a, b, c, lut):
    out = np.zeros_like(a)
    lut = int(lut)
    for i in range(8):
        if lut >> i & 1:
            out |= (a if i & 4 else ~a) & (b if i & 2 else ~b) & (c if i & 1 else ~c)
    return out


def _unary_float(fn: Fn, dt: np.dtype) -> Fn:
    def run(a):
        with np.errstate(**_ERR):
            return fn(a).astype(dt, copy=False)

    return run


_MATH = {
    "rcp": lambda a: np.divide(a.dtype.type(1), a),
    "sqrt": np.sqrt,
    "rsqrt": lambda a: np.divide(a.dtype.type(1), np.sqrt(a)),
    "ex2": np.exp2,
    "lg2": np.log2,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
}


def _testp(ins: Instruction) -> Fn:
    kind = next(m for m in ins.mods)
    tests = {
        "finite": np.isfinite, "infinite": np.isinf, "number": lambda a: ~np.isnan(a),
        "notanumber": np.isnan, "normal": lambda a: np.isfinite(a) & (np.abs(a) >= np.finfo(
            a.dtype).tiny), "subnormal": lambda a: (a != 0) & (np.abs(a) < np.finfo(a.dtype).tiny),
    }  # fmt: skip
    return tests[kind]


def build_alu(ins: Instruction, dt: np.dtype) -> Fn | None:
    """The vectorised function for an arithmetic/logic instruction, or None if not one."""
    b = ins.base
    with np.errstate(**_ERR):
        simple: dict[str, Fn] = {
            "and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y,
            "not": lambda x: ~x, "cnot": lambda x: (x == 0).astype(x.dtype),
            "shl": _shift(True), "shr": _shift(False), "popc": lambda x: np.bitwise_count(
                x.view(UNSIGNED[x.dtype.itemsize])).astype(np.uint32),
            "clz": _clz, "bfind": _bfind, "brev": _brev, "bfe": _bfe, "bfi": _bfi,
            "prmt": _prmt, "lop3": _lop3, "selp": lambda x, y, c: np.where(c, x, y),
            "copysign": lambda x, y: np.copysign(y, x), "testp": _testp(ins) if b == "testp" else
            None, "mul24": lambda x, y: (x.astype(np.int64) * y.astype(np.int64)).astype(x.dtype),
        }  # fmt: skip
    if b in simple:
        return simple[b]
    if b in ("add", "sub"):
        op = (lambda x, y: x + y) if b == "add" else (lambda x, y: x - y)
        return _sat(ins, _float_op(ins, dt, op, 2), dt)
    if b == "mul":
        return build_mul(ins, dt)
    if b in ("mad", "fma"):
        return build_mad(ins, dt)
    if b == "div":
        return (lambda x, y: np.divide(x, y)) if dt.kind == "f" else _int_div
    if b == "rem":
        return _int_rem
    if b in ("min", "max"):
        if dt.kind == "f":
            return np.fmin if b == "min" else np.fmax
        return np.minimum if b == "min" else np.maximum
    if b == "abs":
        return np.abs
    if b == "neg":
        return np.negative
    if b in _MATH:
        return _unary_float(_MATH[b], dt)
    if b == "sad":
        return lambda x, y, z: np.where(x > y, x - y, y - x) + z
    return None


__all__ = ["FLOATS", "build_alu", "round_to"]
