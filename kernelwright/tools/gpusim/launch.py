"""Public entry point of the PTX emulator: ``launch(ptx, kernel, grid, block, args)``.

Example:
    >>> stats = launch(ptx, "vadd", grid=(4,), block=(256,), args=[x, y, out, np.int32(n)])
    >>> stats.global_store_bytes == 4 * n  # out[i] = x[i] + y[i] for i < n
    True
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import time
from collections import Counter
from functools import lru_cache
from typing import Any

import numpy as np

from kernelwright.errors import LaunchError
from kernelwright.tools.gpusim._memory import GlobalMemory
from kernelwright.tools.gpusim._trace import TraceSampling, WarpRecorder
from kernelwright.tools.gpusim._types import dtype_of
from kernelwright.tools.gpusim.address_space import AddressSpace
from kernelwright.tools.gpusim.emulator import (
    LaunchContext,
    LaunchStats,
    Program,
    run_batch,
    stats_from,  # fmt: skip
)
from kernelwright.tools.gpusim.ptx import Module, Param, parse_ptx
from kernelwright.tools.gpusim.records import KernelInfo, TraceSink
from kernelwright.tools.ptxas import register_counts

log = logging.getLogger(__name__)
_KERNEL_IDS = itertools.count(1)
_POINTER_TYPES = ("u64", "b64", "s64")


@lru_cache(maxsize=64)
def _module(ptx_hash: str, ptx: str) -> tuple[Module, dict[str, np.ndarray]]:
    mod = parse_ptx(ptx)
    globals_ = {}
    for v in mod.variables:
        if v.space in ("global", "const") and not v.extern:
            buf = np.zeros(max(v.size, 1), np.uint8)
            if v.init:
                buf[: len(v.init)] = np.frombuffer(v.init, np.uint8)
            globals_[v.name] = buf
    return mod, globals_


@lru_cache(maxsize=256)
def _program(ptx_hash: str, ptx: str, kernel: str) -> Program:
    mod, _ = _module(ptx_hash, ptx)
    if kernel not in mod.kernels:
        raise LaunchError(
            f"kernel {kernel!r} is not in the PTX module; it has "
            f'{sorted(mod.kernels)} (declare it extern "C" to keep the name)'
        )
    return Program.build(mod.kernels[kernel], tuple(mod.variables))


def program(ptx: str, kernel: str) -> Program:
    """The compiled (cached) program of ``kernel`` in ``ptx``."""
    return _program(_hash(ptx), ptx, kernel)


def _hash(ptx: str) -> str:
    return hashlib.sha256(ptx.encode()).hexdigest()


def _dim3(value: Any, what: str) -> tuple[int, int, int]:
    dims = (int(value),) if np.isscalar(value) else tuple(int(d) for d in value)
    if not 1 <= len(dims) <= 3 or min(dims) < 1:
        raise LaunchError(f"{what}={value!r}: give 1 to 3 positive ints, e.g. {what}=(256,)")
    return (*dims, *(1,) * (3 - len(dims)))  # type: ignore[return-value]


def _as_array(value: Any, index: int) -> np.ndarray | None:
    if isinstance(value, np.ndarray):
        arr = value
    elif type(value).__module__.startswith("torch") and hasattr(value, "numpy"):
        if value.device.type != "cpu":
            raise LaunchError(f"argument {index} is a tensor on {value.device}; the PTX "
                              "emulator needs CPU tensors (t.cpu())")  # fmt: skip
        t = value.detach()
        try:
            arr = t.numpy()
        except TypeError:  # bfloat16 and other dtypes numpy lacks: pass the raw bytes
            arr = (
                t.contiguous().view(-1).view(_torch_uint8()).numpy() if t.is_contiguous() else None
            )
            if arr is None:
                raise LaunchError(
                    f"argument {index} is not contiguous; pass .contiguous()"
                ) from None
    else:
        return None
    if not arr.flags.c_contiguous:
        raise LaunchError(f"argument {index} is not contiguous; pass a .contiguous() copy")
    return arr


def _torch_uint8():
    import torch

    return torch.uint8


def _param_bytes(params: list[Param], args: list[Any], mem: GlobalMemory) -> bytes:
    if len(args) != len(params):
        raise LaunchError(f"the kernel takes {len(params)} arguments, {len(args)} were given")
    buf = bytearray(max((p.offset + p.size for p in params), default=0))
    for i, (p, a) in enumerate(zip(params, args, strict=True)):
        arr = _as_array(a, i)
        if arr is not None:
            if p.type not in _POINTER_TYPES:
                raise LaunchError(f"argument {i} is an array but parameter {p.name} is .{p.type}")
            raw = np.uint64(mem.add(arr, f"arg{i}")).tobytes()
        elif isinstance(a, bytes | bytearray):
            raw = bytes(a)
        else:
            raw = np.asarray(a).astype(dtype_of(p.type) if p.type in _TYPES_OK else np.uint8)
            raw = raw.tobytes()
        if len(raw) != p.size:
            raise LaunchError(f"argument {i} has {len(raw)} bytes but parameter {p.name} "
                              f"(.{p.type}) takes {p.size}")  # fmt: skip
        buf[p.offset : p.offset + p.size] = raw
    return bytes(buf)


_TYPES_OK = frozenset("b8 b16 b32 b64 u8 u16 u32 u64 s8 s16 s32 s64 f16 f32 f64".split())


def launch(ptx: str, kernel: str, grid: Any, block: Any, args: list[Any] | tuple[Any, ...],
           shared_bytes: int = 0, trace: TraceSink | None = None, *,
           sampling: TraceSampling | None = None, max_threads: int = 32768,
           kernel_id: int | None = None,
           address_space: AddressSpace | None = None) -> LaunchStats:  # fmt: skip
    """Emulate one kernel launch on CPU arrays; pointer arguments are written in place.

    Args:
        ptx: PTX text (``nvcc -arch=sm_90 -ptx``).
        kernel: entry name.
        grid, block: launch geometry (int or 1-3 ints).
        args: numpy arrays / CPU torch tensors for pointers, Python/numpy scalars otherwise
            (converted to the parameter's PTX type).
        shared_bytes: dynamic shared memory per CTA (``extern __shared__``).
        trace: optional sink receiving ``KernelInfo`` and one ``WarpStream`` per traced warp.
        sampling: which CTAs/warps to trace (default: all).
        max_threads: threads emulated together in one batch of CTAs.
        kernel_id: id in the trace header (default: a process-wide counter).
        address_space: device addresses of the buffers; pass one space to every launch of a
            program so each buffer keeps its address across launches (inter-kernel reuse in
            the timing model's L2). Default: a fresh space (addresses restart every launch).

    Returns:
        LaunchStats with instruction counts and memory traffic.
    """
    grid3, block3 = _dim3(grid, "grid"), _dim3(block, "block")
    if block3[0] * block3[1] * block3[2] > 1024:
        raise LaunchError(f"block={block3} has more than 1024 threads")
    h = _hash(ptx)
    prog = _program(h, ptx, kernel)
    _, module_globals = _module(h, ptx)
    mem = GlobalMemory(address_space)
    symbols = {n: ("global", mem.add(b, n)) for n, b in module_globals.items()}
    params = _param_bytes(prog.kernel.params, list(args), mem)
    ctx = LaunchContext(grid3, block3, int(shared_bytes), mem, params, symbols)
    counters: Counter = Counter()
    t0 = time.perf_counter()
    kid = next(_KERNEL_IDS) if kernel_id is None else kernel_id
    if trace is not None:
        mod, _ = _module(h, ptx)
        nregs = register_counts(h, ptx, mod.target.split(",")[0].strip()).get(kernel, 0)
        trace.begin_kernel(_info(prog, kid, grid3, block3, shared_bytes, nregs))
    for ctas, factory in _batches(prog, grid3, block3, max_threads, trace, sampling):
        run_batch(prog, ctx, ctas, counters, factory)
    if trace is not None:
        trace.end_kernel()
    return stats_from(counters, kernel, grid3, block3, time.perf_counter() - t0)


def _info(prog: Program, kid: int, grid, block, shared_bytes: int, nregs: int) -> KernelInfo:
    return KernelInfo(
        kid,
        prog.kernel.name,
        grid,
        block,
        prog.shared_static + shared_bytes,
        nregs,
        90,
        extra={"trace source": "ptx-emulator (PTX opcodes, pc = 16 x PTX index)"},
    )


def _batches(prog, grid, block, max_threads, trace, sampling):
    gx, gy, gz = grid
    n = gx * gy * gz
    ids = np.arange(n)
    ctas = np.stack([ids % gx, (ids // gx) % gy, ids // (gx * gy)], axis=1)
    wpc = -(-(block[0] * block[1] * block[2]) // 32)
    per = max(1, max_threads // (wpc * 32))
    samp = sampling or TraceSampling()
    traced_cta = samp.traced_ctas(ids) if trace is not None else np.zeros(n, bool)
    for start in range(0, n, per):
        sl = slice(start, min(n, start + per))
        factory = None
        if traced_cta[sl].any():
            factory = _recorder_factory(prog, trace, traced_cta[sl], ctas[sl], wpc, samp)
        yield ctas[sl], factory


def _recorder_factory(prog, sink, traced_cta, ctas, wpc, samp):
    warp_ok = np.arange(wpc) < (samp.warps_per_cta or wpc)
    traced = (traced_cta[:, None] & warp_ok[None, :]).reshape(-1)
    return lambda st: WarpRecorder(sink, traced, prog.ops, ctas, wpc)
