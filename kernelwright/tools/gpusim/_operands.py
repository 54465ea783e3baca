"""Operand fetchers and destination writers, built once per instruction.

A fetcher is ``f(st, sel) -> array | scalar``: the operand's values for the selected threads
(``sel`` is an index array, or None for every thread of the batch) in the instruction's type.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kernelwright.tools.gpusim._types import convert, dtype_of, float_scalar, int_scalar
from kernelwright.tools.gpusim.ptx import Instruction, Operand

Fetch = Callable[..., object]


def fetcher(op: Operand, dt: np.dtype) -> Fetch:
    """A fetcher for a source operand read as ``dt``."""
    if op.kind == "reg":
        return _reg_fetch(op.name, dt, op.neg)
    if op.kind == "int":
        val = int_scalar(op.value, dt)
        return lambda st, sel: val
    if op.kind == "float":
        val = float_scalar(op.value, op.ftype, dt)
        return lambda st, sel: val
    if op.kind == "special":
        name = op.name

        def special(st, sel):
            v = st.special(name)
            return convert(v if sel is None else v[sel], dt)

        return special
    if op.kind == "sym":
        name = op.name
        return lambda st, sel: int_scalar(st.symbol(name)[1], dt)
    if op.kind == "vec":
        parts = [fetcher(o, dt) for o in op.items]
        return lambda st, sel: [p(st, sel) for p in parts]
    raise ValueError(f"operand kind {op.kind} cannot be read")


def _reg_fetch(name: str, dt: np.dtype, neg: bool) -> Fetch:
    def reg(st, sel):
        v = st.regs[name]
        if sel is not None:
            v = v[sel]
        v = convert(v, dt)
        return ~v if neg else v

    return reg


Write = Callable[[object, object, object], None]


def writer(op: Operand) -> Write:
    """A writer for a destination register operand (``_`` discards)."""
    if op.kind == "sink":
        return lambda st, sel, value: None
    if op.kind != "reg":
        raise ValueError(f"destination {op.kind} is not a register")
    name = op.name
    return lambda st, sel, value: st.write(name, sel, value)


def reg_names(ops: tuple[Operand, ...]) -> list[str]:
    """Register names read or written by ``ops`` (including address bases and vector items)."""
    out: list[str] = []
    for op in ops:
        if op.kind in ("reg", "addr") and op.name.startswith("%"):
            out.append(op.name)
        elif op.items:
            out.extend(reg_names(op.items))
    return out


def mov_vector(ins: Instruction, regs: dict[str, str]) -> Callable:
    """``mov.b64 {%a,%b}, %rd`` (unpack) or ``mov.b64 %rd, {%a,%b}`` (pack)."""
    dst, src = ins.operands
    total = dtype_of(ins.types[-1])
    if dst.kind == "vec":
        parts = dst.items
        size = total.itemsize // len(parts)
        get = fetcher(src, total)
        writers = [writer(p) for p in parts]

        def unpack(st, sel):
            v = np.ascontiguousarray(np.atleast_1d(get(st, sel)))
            pieces = v.view(np.dtype(f"u{size}")).reshape(-1, len(parts))
            for i, w in enumerate(writers):
                w(st, sel, pieces[:, i].copy())

        return unpack
    size = total.itemsize // len(src.items)
    gets = [fetcher(p, np.dtype(f"u{size}")) for p in src.items]
    put = writer(dst)

    def pack(st, sel):
        vals = np.broadcast_arrays(*[np.atleast_1d(g(st, sel)) for g in gets])
        both = np.ascontiguousarray(np.stack(vals, axis=-1))
        put(st, sel, both.view(total).reshape(-1))

    return pack
