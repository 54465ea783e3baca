"""The state of one batch of CTAs: registers as arrays over every thread, special registers,
and the memory spaces (global shared by the launch, shared per CTA, local per thread)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from kernelwright.tools.gpusim._atomics import atomic
from kernelwright.tools.gpusim._memory import (
    LOCAL_WINDOW,
    SHARED_WINDOW,
    WINDOW_SIZE,
    Arena,
)
from kernelwright.tools.gpusim._types import convert


class Registers(dict):
    """name -> array[T]; a register read before any write is zero."""

    def __init__(self, dtypes: dict[str, np.dtype], n: int) -> None:
        super().__init__()
        self.dtypes = dtypes
        self.n = n

    def __missing__(self, name: str) -> np.ndarray:
        if name not in self.dtypes:
            raise KeyError(f"register {name} is not declared")
        arr = np.zeros(self.n, self.dtypes[name])
        self[name] = arr
        return arr


class BatchState:
    """What executors see: ``regs``, ``write``, ``special``, ``symbol``, ``param`` and memory."""

    def __init__(self, prog, launch, ctas: np.ndarray, counters: Counter) -> None:
        bx, by, bz = launch.block
        self.prog, self.launch, self.ctas = prog, launch, ctas
        self.wpc = -(-(bx * by * bz) // 32)
        self.W = len(ctas) * self.wpc
        self.T = self.W * 32
        self.regs = Registers(prog.reg_dtypes, self.T)
        self.counters = counters
        self.shared = Arena(len(ctas), max(prog.shared_static + launch.shared_bytes, 1), "shared")
        self.local = Arena(self.T, max(prog.local_bytes, 1), "local") if prog.local_bytes else None
        self._specials: dict[str, np.ndarray] = {}
        self.clock = 0
        self.last_addr: np.ndarray | None = None
        t = np.arange(self.T)
        self.cta_slot = (t >> 5) // self.wpc
        self.local_tid = ((t >> 5) % self.wpc) * 32 + (t & 31)

    # ------------------------------------------------------------------ registers
    def count(self, sel) -> int:
        return self.T if sel is None else sel.size

    def write(self, name: str, sel, value) -> None:
        dt = self.regs.dtypes[name]
        v = np.asarray(value)
        if v.dtype != dt:
            v = convert(v, dt)
        if sel is None:
            self.regs[name] = v if v.shape == (self.T,) else np.broadcast_to(v, (self.T,))
            return
        arr = self.regs[name].copy()
        arr[sel] = v if v.ndim == 0 or v.shape == sel.shape else np.broadcast_to(v, sel.shape)
        self.regs[name] = arr

    def special(self, name: str) -> np.ndarray:
        if name not in self._specials or name.startswith("%clock"):
            self._specials[name] = self._compute_special(name)
        return self._specials[name]

    def _compute_special(self, name: str) -> np.ndarray:
        base, _, axis = name.partition(".")
        k = "xyz".index(axis) if axis else 0
        bx, by, _ = self.launch.block
        lt = self.local_tid
        u32 = np.uint32
        if base == "%tid":
            return (lt % bx if k == 0 else (lt // bx) % by if k == 1 else lt // (bx * by)).astype(
                u32
            )
        if base == "%ctaid":
            return self.ctas[self.cta_slot, k].astype(u32)
        lane = (np.arange(self.T) & 31).astype(np.uint64)
        one = np.uint64(1)
        table = {
            "%ntid": lambda: self.launch.block[k], "%nctaid": lambda: self.launch.grid[k],
            "%laneid": lambda: lane, "%warpid": lambda: (np.arange(self.T) >> 5) % self.wpc,
            "%nwarpid": lambda: self.wpc, "%smid": lambda: 0, "%nsmid": lambda: 1,
            "%gridid": lambda: 0, "%clock": lambda: self.clock, "%clock64": lambda: self.clock,
            "%globaltimer": lambda: self.clock, "%lanemask_eq": lambda: one << lane,
            "%lanemask_lt": lambda: (one << lane) - one,
            "%lanemask_le": lambda: (one << lane) * 2 - one,
            "%lanemask_gt": lambda: ~((one << lane) * 2 - one),
            "%lanemask_ge": lambda: ~((one << lane) - one),
            "%dynamic_smem_size": lambda: self.launch.shared_bytes,
            "%total_smem_size": lambda: self.shared.slot_bytes,
        }  # fmt: skip
        if base not in table:
            raise KeyError(f"special register {name} is not supported")
        dt = np.uint64 if base in ("%clock64", "%globaltimer") else np.uint32
        return np.broadcast_to(np.asarray(table[base]()).astype(np.uint64).astype(dt), (self.T,))

    def symbol(self, name: str) -> tuple[str, int]:
        try:
            return self.prog.symbols.get(name) or self.launch.symbols[name]
        except KeyError:
            raise KeyError(f"symbol {name} is not declared") from None

    def param(self, name: str, offset: int, dt: np.dtype):
        p = self.prog.params[name]
        return np.frombuffer(self.launch.param_buffer, dt, 1, p.offset + offset)[0]

    # ------------------------------------------------------------------ memory
    def _slots(self, space: str, sel) -> np.ndarray:
        t = np.arange(self.T) if sel is None else sel
        return self.cta_slot[t] if space == "shared" else t

    def _note(self, space: str, kind: str, nbytes: int, addr: np.ndarray, vec: int) -> None:
        self.counters[f"{space}_{kind}_bytes"] += nbytes
        self.last_addr = addr[::vec] if vec > 1 else addr

    def load(self, space: str, addr: np.ndarray, dt: np.dtype, sel, vec: int = 1) -> np.ndarray:
        space = "global" if space == "const" else space
        self._note(space, "load", addr.size * dt.itemsize, addr, vec)
        if space == "global":
            return self.launch.memory.load(addr, dt)
        if space != "generic":
            arena = self.shared if space == "shared" else self._local()
            return arena.load(np.repeat(self._slots(space, sel), vec), addr, dt)
        out = np.empty(addr.size, dt)
        for sp, lanes, a in self._split_generic(addr):
            sub = sel if sel is None or vec == 1 else sel
            out[lanes] = self.load(sp, a, dt, _sub(sub, lanes, vec), 1)
        return out

    def store(self, space: str, addr: np.ndarray, values: np.ndarray, sel, vec: int = 1) -> None:
        space = "global" if space == "const" else space
        self._note(space, "store", values.nbytes, addr, vec)
        if space == "global":
            self.launch.memory.store(addr, values)
        elif space != "generic":
            arena = self.shared if space == "shared" else self._local()
            arena.store(np.repeat(self._slots(space, sel), vec), addr, values)
        else:
            for sp, lanes, a in self._split_generic(addr):
                self.store(sp, a, values[lanes], _sub(sel, lanes, vec), 1)

    def atomic(self, space, addr, dt, op, b, c, need_old, sel):
        self.counters[f"{space}_atomics"] += addr.size
        self.last_addr = addr
        if space == "generic":
            parts = self._split_generic(addr)
            if len(parts) > 1:
                raise ValueError("generic atomics spanning several state spaces")
            space, _, addr = parts[0]
        if space == "global":
            (buf, off, lanes), *more = list(self.launch.memory.offsets(addr, dt.itemsize))
            if more or lanes is not None:
                raise ValueError("atomics spanning several buffers in one instruction")
        else:
            buf = self.shared.data
            off = self.shared.flat(self._slots("shared", sel), addr, dt.itemsize)
        view = buf[: buf.size // dt.itemsize * dt.itemsize].view(dt)
        return atomic(view, off // dt.itemsize, op, b, c, need_old)

    def _local(self) -> Arena:
        if self.local is None:
            raise ValueError("local memory used but the kernel declares none")
        return self.local

    def _split_generic(self, addr: np.ndarray) -> list[tuple[str, np.ndarray, np.ndarray]]:
        out = []
        rel_s = addr - np.uint64(SHARED_WINDOW)
        rel_l = addr - np.uint64(LOCAL_WINDOW)
        in_s, in_l = rel_s < WINDOW_SIZE, rel_l < WINDOW_SIZE
        for sp, m, a in (("shared", in_s, rel_s), ("local", in_l, rel_l),
                         ("global", ~(in_s | in_l), addr)):  # fmt: skip
            if m.any():
                lanes = np.flatnonzero(m)
                out.append((sp, lanes, a[lanes]))
        return out


def _sub(sel, lanes: np.ndarray, vec: int):
    """The thread indices of the generic-access lanes ``lanes`` (vector elements repeat)."""
    if sel is None:
        return lanes // vec
    return np.repeat(sel, vec)[lanes] if vec > 1 else sel[lanes]
