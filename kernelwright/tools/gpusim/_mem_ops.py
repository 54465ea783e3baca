"""Executors for ld / st / atom / red / cvta. Memory itself lives in the batch state."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kernelwright.tools.gpusim._operands import fetcher, writer
from kernelwright.tools.gpusim._types import dtype_of
from kernelwright.tools.gpusim.ptx import Instruction, Kernel, Operand

_SPACES = ("global", "shared", "local", "const", "param")
_ATOM_OPS = ("add", "min", "max", "exch", "cas", "and", "or", "xor", "inc", "dec")
U64 = np.dtype(np.uint64)


def build_memory(ins: Instruction, kernel: Kernel) -> tuple[Callable, int, str]:
    """(executor, bytes per lane, state space) for a memory instruction."""
    from kernelwright.tools.gpusim._exec import cvta_fn

    if ins.base == "cvta":
        return cvta_fn(ins), 0, ""
    space = next((m for m in ins.mods if m in _SPACES), "generic")
    dt = dtype_of(ins.types[-1])
    vec = next((int(m[1:]) for m in ins.mods if m in ("v2", "v4", "v8")), 1)
    if ins.base in ("ld", "ldu"):
        if space == "param":
            return _ld_param(ins, kernel, dt), dt.itemsize, space
        return _load(ins, space, dt, vec), dt.itemsize * vec, space
    if ins.base == "st":
        if space == "param":  # argument set-up of a call sequence; only vprintf is run (as nop)
            return (lambda st, sel: None), 0, space
        return _store(ins, space, dt, vec), dt.itemsize * vec, space
    return _atomic(ins, space, dt), dt.itemsize, space


def _full(v, n: int) -> np.ndarray:
    """``v`` as an array of ``n`` lanes (a view when it is a scalar)."""
    return v if getattr(v, "shape", None) == (n,) else np.broadcast_to(v, (n,))


def address(op: Operand) -> Callable:
    """Fetcher of the byte address of ``[base+offset]`` (a register or a symbol)."""
    if op.kind != "addr":
        raise ValueError(f"expected an address operand, got {op.kind}")
    off = np.uint64(op.offset % (1 << 64))
    if op.name.startswith("%"):
        base = fetcher(Operand("reg", op.name), U64)
        return lambda st, sel: base(st, sel) + off
    name = op.name
    return lambda st, sel: np.uint64(st.symbol(name)[1]) + off


def _ld_param(ins: Instruction, kernel: Kernel, dt: np.dtype) -> Callable:
    dst, src = ins.operands
    if src.kind != "addr" or src.name.startswith("%"):
        raise ValueError("ld.param through a register address is not supported")
    put = writer(dst)
    name, offset = src.name, src.offset
    if name not in {p.name for p in kernel.params}:  # a call's return value (vprintf: 0)
        return lambda st, sel: put(st, sel, dt.type(0))
    return lambda st, sel: put(st, sel, st.param(name, offset, dt))


def _vector_addresses(addr: np.ndarray, vec: int, width: int) -> np.ndarray:
    if vec == 1:
        return addr
    return (addr[:, None] + np.arange(vec, dtype=np.uint64) * np.uint64(width)).reshape(-1)


def _load(ins: Instruction, space: str, dt: np.dtype, vec: int) -> Callable:
    dst, src = ins.operands
    get_addr = address(src)
    puts = [writer(o) for o in (dst.items if dst.kind == "vec" else (dst,))]

    def run(st, sel):
        addr = _full(get_addr(st, sel), st.count(sel))
        vals = st.load(space, _vector_addresses(addr, vec, dt.itemsize), dt, sel, vec)
        if vec == 1:
            puts[0](st, sel, vals)
            return
        vals = vals.reshape(-1, vec)
        for i, put in enumerate(puts):
            put(st, sel, vals[:, i])

    return run


def _store(ins: Instruction, space: str, dt: np.dtype, vec: int) -> Callable:
    dst, src = ins.operands
    get_addr = address(dst)
    get_val = fetcher(src, dt)

    def run(st, sel):
        n = st.count(sel)
        addr = _full(get_addr(st, sel), n)
        val = get_val(st, sel)
        if vec > 1:
            val = np.stack(np.broadcast_arrays(*[np.broadcast_to(v, (n,)) for v in val]), -1)
        val = np.ascontiguousarray(np.broadcast_to(val, (n, vec) if vec > 1 else (n,)), dt)
        st.store(space, _vector_addresses(addr, vec, dt.itemsize), val.reshape(-1), sel, vec)

    return run


def _atomic(ins: Instruction, space: str, dt: np.dtype) -> Callable:
    op = next((m for m in ins.mods if m in _ATOM_OPS), None)
    if op is None or dt.kind == "b" or ins.types[-1] in ("f16", "bf16", "f16x2"):
        raise ValueError(f"atomic '{ins.opcode}' is not supported")
    is_red = ins.base == "red"
    ops = ins.operands
    put = None if is_red else writer(ops[0])
    a_op, rest = (ops[0], ops[1:]) if is_red else (ops[1], ops[2:])
    get_addr = address(a_op)
    getters = [fetcher(o, dt) for o in rest]
    need_old = not is_red and ops[0].kind != "sink"

    def run(st, sel):
        n = st.count(sel)
        addr = _full(get_addr(st, sel), n)
        vals = [_full(g(st, sel), n) for g in getters]
        old = st.atomic(space, addr, dt, op, vals[0], vals[1] if len(vals) > 1 else None,
                        need_old, sel)  # fmt: skip
        if put is not None:
            put(st, sel, old)

    return run
