"""A functional PTX emulator, vectorised with numpy across every thread of a batch of CTAs.

Registers are arrays over all threads of up to ``max_threads`` threads (many CTAs at once);
warps of 32 carry SIMT stacks (``_simt.py``) that reconverge at immediate post-dominators
(``_cfg.py``). Each step executes one instruction for every warp whose pc is the lowest
runnable pc, on all their active lanes at once; ``bar.sync`` blocks a warp until every live
warp of its CTA has arrived. See ``launch.py`` for the public entry point.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from kernelwright.errors import EmulatorError
from kernelwright.tools.gpusim._cfg import reconvergence_points
from kernelwright.tools.gpusim._exec import Op, compile_kernel
from kernelwright.tools.gpusim._simt import SimtStacks, warp_bits
from kernelwright.tools.gpusim._state import BatchState
from kernelwright.tools.gpusim._types import dtype_of
from kernelwright.tools.gpusim.ptx import Kernel, Param, Variable


@dataclass(frozen=True)
class LaunchStats:
    """What one emulated launch executed.

    ``warp_instructions`` counts issued warp-instructions (predicated-off lanes included);
    ``thread_instructions`` counts lanes that executed (active and predicate true).
    """

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    warp_instructions: int
    thread_instructions: int
    opcode_counts: dict[str, int] = field(default_factory=dict)
    global_load_bytes: int = 0
    global_store_bytes: int = 0
    shared_load_bytes: int = 0
    shared_store_bytes: int = 0
    local_bytes: int = 0
    atomics: int = 0
    barriers: int = 0
    divergent_branches: int = 0
    seconds: float = 0.0

    @property
    def simd_efficiency(self) -> float | None:
        """Thread-instructions per warp-instruction / 32 (None when nothing ran)."""
        if not self.warp_instructions:
            return None
        return self.thread_instructions / (32 * self.warp_instructions)


@dataclass
class Program:
    """A kernel compiled for emulation: executors, reconvergence points, symbols, registers."""

    kernel: Kernel
    ops: list[Op]
    reconv: dict[int, int]
    reg_dtypes: dict[str, np.dtype]
    symbols: dict[str, tuple[str, int]]
    params: dict[str, Param]
    shared_static: int
    local_bytes: int
    trace_names: dict[str, str]

    @classmethod
    def build(cls, kernel: Kernel, module_vars: tuple[Variable, ...] = ()) -> Program:
        symbols: dict[str, tuple[str, int]] = {}
        sizes = {"shared": 0, "local": 0}
        extern = []
        variables = [*kernel.variables, *(v for v in module_vars if v.space == "shared")]
        for v in variables:
            if v.space not in sizes:
                continue
            if v.extern:
                extern.append(v)
                continue
            off = -(-sizes[v.space] // v.align) * v.align
            symbols[v.name] = (v.space, off)
            sizes[v.space] = off + v.size
        for v in extern:
            symbols[v.name] = ("shared", -(-sizes["shared"] // 16) * 16)
        dts = {r: dtype_of(t) for r, t in kernel.regs.items() if t != "b128"}
        names = {r: f"{'P' if t == 'pred' else 'R'}{i + (i >= 255)}"
                 for i, (r, t) in enumerate(kernel.regs.items())}  # fmt: skip
        ops = compile_kernel(kernel)
        for op in ops:
            op.dests = tuple(names.get(r, r) for r in op.dests)
            op.srcs = tuple(names.get(r, r) for r in op.srcs)
        shared_static = max((off + _size(variables, n) for n, (sp, off) in symbols.items()
                             if sp == "shared"), default=0)  # fmt: skip
        shared_static = max(shared_static, symbols[extern[0].name][1] if extern else 0)
        return cls(kernel, ops, reconvergence_points(kernel), dts, symbols,
                   {p.name: p for p in kernel.params}, shared_static, sizes["local"],
                   names)  # fmt: skip


def _size(variables: list[Variable], name: str) -> int:
    return next(v.size for v in variables if v.name == name)


@dataclass
class LaunchContext:
    """Per-launch facts the executors need: geometry, memory, parameters, module symbols."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int
    memory: object
    param_buffer: bytes
    symbols: dict[str, tuple[str, int]]
    max_steps: int = 50_000_000


def run_batch(prog: Program, launch: LaunchContext, ctas: np.ndarray, counters: Counter,
              recorder_factory=None) -> None:  # fmt: skip
    """Execute CTAs ``ctas`` (an [n, 3] array of block indices) to completion."""
    st = BatchState(prog, launch, ctas, counters)
    nthreads = launch.block[0] * launch.block[1] * launch.block[2]
    lane_ok = (np.arange(st.wpc * 32) < nthreads).reshape(st.wpc, 32)
    init = (lane_ok.astype(np.int64) << np.arange(32)).sum(axis=1)
    stacks = SimtStacks(np.tile(init, len(ctas)), len(prog.ops))
    recorder = recorder_factory(st) if recorder_factory else None
    _Scheduler(prog, st, stacks, recorder).run(full=0xFFFFFFFF if nthreads % 32 == 0 else 0)
    if recorder:
        recorder.flush()


class _Scheduler:
    """The step loop: pick the lowest runnable pc, execute it for its warps, update stacks."""

    def __init__(self, prog: Program, st: BatchState, stacks: SimtStacks, recorder) -> None:
        self.prog, self.st, self.s, self.rec = prog, st, stacks, recorder
        self.blocked = np.zeros(st.W, bool)
        self.warp_cta = np.arange(st.W) // st.wpc
        self.c = st.counters
        self.opcodes: Counter = Counter()
        self._cache: tuple | None = None

    def run(self, full: int) -> None:
        s, n = self.s, len(self.prog.ops)
        big = n + 1
        with np.errstate(all="ignore"):
            while True:
                runnable = (s.mask != 0) & ~self.blocked
                if not runnable.any():
                    if self.blocked.any():
                        raise EmulatorError(self._deadlock())
                    break
                pcs = np.where(runnable, s.pc, big)
                pc = int(pcs.min())
                at = pcs == pc
                cohort = np.flatnonzero(at)
                # straight-line code runs until a pc where other warps wait or paths reconverge
                stops = set(pcs[runnable & ~at].tolist()) | set(s.rpc[cohort].tolist()) | {n}
                self._run_cohort(pc, cohort, self._threads(cohort, full), stops)
        for k, v in self.opcodes.items():
            self.c["op:" + k] += v

    def _threads(self, cohort: np.ndarray, full: int):
        key = (cohort.size, self.s.version)
        if self._cache and self._cache[0] == key and np.array_equal(self._cache[1], cohort):
            return self._cache[2]
        threads = self.s.threads(cohort, full)
        self._cache = (key, cohort, threads)
        return threads

    def _run_cohort(self, pc: int, cohort: np.ndarray, threads, stops: set[int]) -> None:
        """Execute from ``pc`` for warps ``cohort`` until a control instruction or a stop pc."""
        ops, st, c, rec = self.prog.ops, self.st, self.c, self.rec
        n_warps, n_all = cohort.size, st.count(threads)
        while True:
            op = ops[pc]
            ins = op.ins
            st.clock += 1
            exec_ = threads
            if ins.pred is not None:
                pv = st.regs[ins.pred] if threads is None else st.regs[ins.pred][threads]
                pv = ~pv if ins.pred_neg else pv
                exec_ = np.flatnonzero(pv) if threads is None else threads[pv]
            self.opcodes[ins.opcode] += n_warps
            c["warp_instructions"] += n_warps
            c["thread_instructions"] += n_all if exec_ is threads else st.count(exec_)
            st.last_addr = None
            kind = op.kind
            if kind == "alu" and (exec_ is None or exec_.size):
                op.run(st, exec_)
            elif kind in ("branch", "exit", "bar"):
                self.s.pc[cohort] = pc
                self._control(op, cohort, exec_)
            if rec is not None:
                rec.record(pc, cohort, exec_, st.last_addr)
            if kind in ("branch", "exit", "bar"):
                break
            pc += 1
            if pc in stops:
                self.s.pc[cohort] = pc
                break
        if st.clock > st.launch.max_steps:
            raise EmulatorError(
                f"kernel {self.prog.kernel.name} ran more than "
                f"{st.launch.max_steps} steps; it probably never terminates"
            )
        self.s.settle(cohort)

    def _control(self, op: Op, cohort: np.ndarray, exec_) -> None:
        if op.kind == "branch":
            self._branch(op, cohort, exec_)
        elif op.kind == "exit":
            self.s.exit_lanes(cohort, warp_bits(exec_, self.st.W)[cohort])
            self._release_barriers()
        else:
            self._barrier(cohort)

    def _branch(self, op: Op, cohort: np.ndarray, exec_) -> None:
        s = self.s
        if op.ins.pred is None:
            s.pc[cohort] = op.target
            return
        taken = warp_bits(exec_, self.st.W)[cohort]
        not_taken = s.mask[cohort] & ~taken
        s.pc[cohort] = np.where(not_taken == 0, op.target, s.pc[cohort] + 1)
        div = (taken != 0) & (not_taken != 0)
        if div.any():
            self.c["divergent_branches"] += int(div.sum())
            reconv = self.prog.reconv.get(op.index, len(self.prog.ops))
            s.pc[cohort[div]] = op.index
            s.diverge(cohort[div], taken[div], not_taken[div], op.index, op.target, reconv)

    def _barrier(self, cohort: np.ndarray) -> None:
        self.c["barriers"] += cohort.size
        self.blocked[cohort] = True
        self._release_barriers()

    def _release_barriers(self) -> None:
        if not self.blocked.any():
            return
        live = self.s.mask != 0
        n = int(self.warp_cta[-1]) + 1
        live_n = np.bincount(self.warp_cta[live], minlength=n)
        held = np.bincount(self.warp_cta[live & self.blocked], minlength=n)
        ready = (held == live_n) & (held > 0)
        go = self.blocked & ready[self.warp_cta]
        if go.any():
            self.blocked[go] = False
            ws = np.flatnonzero(go)
            self.s.pc[ws] += 1
            self.s.version += 1
            self.s.settle(ws)

    def _deadlock(self) -> str:
        pcs = sorted(set(self.s.pc[self.blocked].tolist()))
        lines = [self.prog.ops[p].ins.line for p in pcs if p < len(self.prog.ops)]
        return (f"kernel {self.prog.kernel.name}: warps wait at bar.sync (PTX lines {lines}) "
                "that other warps of their CTA never reach; make every thread of the block "
                "reach each __syncthreads()")  # fmt: skip


def stats_from(counters: Counter, kernel: str, grid, block, seconds: float) -> LaunchStats:
    ops = {k[3:]: v for k, v in counters.items() if k.startswith("op:")}
    return LaunchStats(
        kernel, tuple(grid), tuple(block), counters["warp_instructions"],
        counters["thread_instructions"], ops, counters["global_load_bytes"],
        counters["global_store_bytes"], counters["shared_load_bytes"],
        counters["shared_store_bytes"], counters["local_load_bytes"] +
        counters["local_store_bytes"], counters["global_atomics"] + counters["shared_atomics"] +
        counters["generic_atomics"], counters["barriers"], counters["divergent_branches"],
        seconds,
    )  # fmt: skip


__all__ = [
    "LaunchStats",
    "Program",
    "run_batch",
    "stats_from",
]
