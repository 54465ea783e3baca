"""Compile parsed PTX instructions into vectorised executors (``Op``), once per kernel."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kernelwright.errors import UnsupportedInstructionError
from kernelwright.tools.gpusim._alu import build_alu, round_to
from kernelwright.tools.gpusim._extra_ops import cp_async, cvt_bf16, dp, shf
from kernelwright.tools.gpusim._mem_ops import build_memory
from kernelwright.tools.gpusim._memory import LOCAL_WINDOW, SHARED_WINDOW
from kernelwright.tools.gpusim._operands import fetcher, mov_vector, reg_names, writer
from kernelwright.tools.gpusim._types import dtype_of
from kernelwright.tools.gpusim._warp_ops import build_warp_op
from kernelwright.tools.gpusim.ptx import Instruction, Kernel


@dataclass
class Op:
    """One executable instruction. ``kind``: alu, branch, exit, bar, nop."""

    index: int
    ins: Instruction
    kind: str
    run: Callable | None = None
    target: int = -1
    dests: tuple[str, ...] = ()
    srcs: tuple[str, ...] = ()
    width: int = 0
    space: str = ""


_NOPS = frozenset({"membar", "fence", "nanosleep", "prefetch", "prefetchu", "pmevent",
                   "griddepcontrol", "discard", "applypriority"})  # fmt: skip
_ARRAY_ARGS = frozenset({"prmt", "bfe", "bfi", "brev", "clz", "bfind", "popc", "lop3", "testp"})
_CMP = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater,
    "hs": np.greater_equal,
}  # fmt: skip


def compile_kernel(kernel: Kernel) -> list[Op]:
    """One ``Op`` per instruction; unsupported ones raise when (and only when) executed."""
    return [compile_instruction(kernel, i, ins) for i, ins in enumerate(kernel.instructions)]


def compile_instruction(kernel: Kernel, index: int, ins: Instruction) -> Op:
    names = reg_names(ins.operands)
    no_dest = ("st", "red", "bra", "bar", "barrier", "ret", "exit")
    n_dst = 0 if ins.base in no_dest else 1
    op = Op(index, ins, "alu", dests=tuple(names[:n_dst]), srcs=tuple(names[n_dst:]))
    try:
        _fill(kernel, op)
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        op.kind, op.run = "alu", _raiser(kernel, ins, str(exc))
    return op


def _raiser(kernel: Kernel, ins: Instruction, why: str) -> Callable:
    text = " ".join(ins.text.split())
    msg = (f"unsupported PTX instruction '{text}' in kernel {kernel.name} at PTX line "
           f"{ins.line}: {why}; rewrite the kernel without it or extend "
           "kernelwright/tools/gpusim/_exec.py")  # fmt: skip

    def run(st, sel):
        raise UnsupportedInstructionError(msg)

    return run


def _fill(kernel: Kernel, op: Op) -> None:
    ins = op.ins
    b = ins.base
    if b == "bra":
        if "uni" not in ins.mods and len(ins.operands) != 1:
            raise ValueError("indirect branches are not supported")
        op.kind, op.target = "branch", kernel.labels[ins.operands[-1].name]
    elif b in ("ret", "exit"):
        op.kind = "exit"
    elif b in ("bar", "barrier"):
        op.kind = "nop" if "warp" in ins.mods or "arrive" in ins.mods else "bar"
        if "red" in ins.mods:
            raise ValueError("bar.red is not supported")
    elif b in _NOPS:
        op.kind = "nop"
    elif b == "call":
        callee = next((o.name for o in ins.operands if o.kind == "sym" and o.name[0] != "("), "?")
        if callee != "vprintf":
            raise ValueError(f"calls to device functions ({callee}) are not supported; "
                             "inline them (__forceinline__)")  # fmt: skip
        op.kind = "nop"  # printf output is dropped
    elif b == "cp" and "async" in ins.mods:
        if any(m in ins.mods for m in ("commit_group", "wait_group", "wait_all")):
            op.kind = "nop"
        elif "bulk" in ins.mods:
            raise ValueError("cp.async.bulk (TMA) is not supported")
        else:
            op.run, op.width, op.space = cp_async(ins), 0, "shared"
    elif b in ("ld", "ldu", "st", "atom", "red", "cvta"):
        op.run, op.width, op.space = build_memory(ins, kernel)
    elif b in ("shfl", "vote", "activemask", "redux"):
        op.run = build_warp_op(ins)
    else:
        op.run = _build_compute(ins, kernel)


def _build_compute(ins: Instruction, kernel: Kernel) -> Callable:
    b = ins.base
    if b == "mov":
        if any(o.kind == "vec" for o in ins.operands):
            return mov_vector(ins, kernel.regs)
        return _simple(ins, lambda a: a, [dtype_of(ins.types[-1])])
    if b == "setp":
        return _setp(ins)
    if b == "cvt":
        return _cvt(ins)
    if b == "selp":
        t = dtype_of(ins.types[-1])
        return _simple(ins, lambda x, y, c: np.where(c, x, y), [t, t, np.dtype(bool)])
    if b == "slct":
        t, c = dtype_of(ins.types[0]), dtype_of(ins.types[1])
        return _simple(ins, lambda x, y, z: np.where(z >= 0, x, y), [t, t, c])
    if b in ("shf", "dp4a", "dp2a"):
        fn, types = (shf if b == "shf" else dp)(ins)
        return _simple(ins, fn, types)
    if b == "prmt" and len(ins.mods):
        raise ValueError(f"prmt mode .{ins.mods[0]} is not supported")
    if not ins.types:
        raise ValueError(f"'{b}' is not a known instruction")
    dt = dtype_of(ins.types[-1])
    fn = build_alu(ins, dt)
    if fn is None:
        raise ValueError(f"'{ins.opcode}' is not implemented")
    return _simple(ins, fn, _src_types(ins, dt))


def _src_types(ins: Instruction, dt: np.dtype) -> list[np.dtype]:
    n = len(ins.operands) - 1
    u32 = np.dtype(np.uint32)
    if ins.base in ("shl", "shr"):
        return [dt, u32]
    if ins.base == "bfe":
        return [dt, u32, u32]
    if ins.base == "bfi":
        return [dt, dt, u32, u32]
    if ins.base == "mad" and "wide" in ins.mods:
        return [dt, dt, np.dtype(dt.str[:-1] + str(2 * dt.itemsize))]
    if ins.base == "lop3":
        return [dt, dt, dt, u32]
    return [dt] * n


def _simple(ins: Instruction, fn: Callable, types: list[np.dtype]) -> Callable:
    srcs = [fetcher(o, t) for o, t in zip(ins.operands[1:], types, strict=False)]
    put = writer(ins.operands[0])
    arrays = ins.base in _ARRAY_ARGS

    def run(st, sel):
        vals = [s(st, sel) for s in srcs]
        if arrays:
            vals = np.broadcast_arrays(*[np.atleast_1d(v) for v in vals])
        put(st, sel, fn(*vals))

    return run


def _setp(ins: Instruction) -> Callable:
    cmp = ins.mods[0]
    boolop = ins.mods[1] if len(ins.mods) > 1 else None
    dt = dtype_of(ins.types[-1])
    unordered = cmp.endswith("u") and cmp not in ("num",) and dt.kind == "f"
    base = cmp[:-1] if unordered else cmp
    dst = ins.operands[0]
    a, b = fetcher(ins.operands[1], dt), fetcher(ins.operands[2], dt)
    c = fetcher(ins.operands[3], np.dtype(bool)) if boolop else None
    comb = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}.get(boolop or "")
    puts = [writer(o) for o in (dst.items if dst.kind == "pair" else (dst,))]

    def compare(x, y):
        if base == "num":
            return ~(np.isnan(x) | np.isnan(y))
        if base == "nan":
            return np.isnan(x) | np.isnan(y)
        r = _CMP[base](x, y)
        if dt.kind == "f" and (unordered or base == "ne"):
            nan = np.isnan(x) | np.isnan(y)
            r = (r | nan) if unordered else (r & ~nan)
        return r

    def run(st, sel):
        r = compare(a(st, sel), b(st, sel))
        cv = c(st, sel) if c is not None else None
        puts[0](st, sel, comb(r, cv) if comb else r)
        if len(puts) > 1:
            puts[1](st, sel, comb(~r, cv) if comb else ~r)

    return run


_INT_ROUND = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


def _cvt(ins: Instruction) -> Callable:
    dst_t, src_t = dtype_of(ins.types[0]), dtype_of(ins.types[1])
    mode = next((m for m in ins.mods if m in _INT_ROUND or m in ("rn", "rz", "rm", "rp")), None)
    sat = "sat" in ins.mods
    if "bf16" in ins.types[:2]:
        fn, types = cvt_bf16(ins)
        return _simple(ins, fn, types)

    def conv(a):
        if dst_t.kind == "f":
            if src_t.kind == "f" and mode in _INT_ROUND:
                out = _INT_ROUND[mode](a).astype(dst_t)
            elif src_t.kind == "f" and dst_t.itemsize < src_t.itemsize:
                out = round_to(a.astype(np.float64), dst_t, mode)
            else:
                out = np.asarray(a).astype(dst_t)
            return np.nan_to_num(np.clip(out, 0, 1), nan=0).astype(dst_t) if sat else out
        if src_t.kind == "f":
            r = _INT_ROUND.get(mode or "rzi", np.trunc)(a.astype(np.float64))
            info = np.iinfo(dst_t)
            return np.nan_to_num(np.clip(r, info.min, info.max), nan=0).astype(dst_t)
        if sat:
            info = np.iinfo(dst_t)
            wide = (
                np.asarray(a).astype(np.float64) if a.dtype.itemsize == 8 else a.astype(np.int64)
            )
            return np.clip(wide, info.min, info.max).astype(dst_t)
        return np.asarray(a).astype(dst_t)

    return _simple(ins, conv, [src_t])


def cvta_fn(ins: Instruction) -> Callable:
    """``cvta[.to].space`` as an address translation between generic and space addresses."""
    space = next((m for m in ins.mods if m in ("global", "shared", "local", "const", "param")), "")
    window = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW}.get(space, 0)
    sign = -1 if "to" in ins.mods else 1
    dt = dtype_of(ins.types[-1])
    delta = dt.type((sign * window) % (1 << (8 * dt.itemsize)))
    return _simple(ins, lambda a: a + delta, [dt])
