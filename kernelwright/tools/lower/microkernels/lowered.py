"""The lowering's C++ GEMM through the packed micro-kernel: a fusion group's IR operands and
epilogue become :class:`GemmProblem` fragments (statements captured from the kernel context),
and its schedule parameters a :class:`Blocking`.

Schedule parameters (per group, ``g<i>.``): ``algo`` (``packed`` here, ``tile`` the older
one-tile-per-unit emitter), ``mr`` / ``nr`` (micro-tile; ``nr`` a multiple of the vector
width), ``kc`` / ``mc`` / ``nc`` (cache blocks) and ``threads``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kernelwright.tools.lower.dtypes import compute_type, load_expr
from kernelwright.tools.lower.index import Ix, unravel
from kernelwright.tools.lower.microkernels.isa import Isa, detect_isa
from kernelwright.tools.lower.microkernels.packed_gemm import (
    GemmProblem,
    default_blocking,
    gemm_source,
)
from kernelwright.tools.lower.microkernels.packed_runs import PackedRun

if TYPE_CHECKING:
    from kernelwright.tools.lower.codegen import KernelCtx

# below this many multiply-adds the one-tile-per-unit emitter is kept (packing costs more)
PACKED_MIN_FMAS = 32 * 32 * 32


def gemm_choices(isa: Isa | None = None) -> dict[str, list[Any]]:
    """The packed GEMM's tunables on this CPU (``nr`` in vector widths)."""
    w = (isa or detect_isa()).width("float")
    return {"algo": ["packed", "tile"], "mr": [4, 6, 8, 12], "nr": [w, 2 * w, 3 * w],
            "kc": [128, 256, 384], "mc": [48, 96, 192], "nc": [256, 512, 1024]}


def gemm_defaults(g, isa: Isa | None = None) -> dict[str, Any]:
    """Packed from ``PACKED_MIN_FMAS`` multiply-adds and M, N >= 8; blocks of
    :func:`default_blocking`."""
    bl = default_blocking(isa or detect_isa())
    algo = "packed"
    if g is not None:  # None: the blocking only
        fmas = math.prod(g.batch or (1,)) * g.m * g.n * g.kdim
        # a matrix-vector product (M or N below 8) is memory-bound: packing would copy the
        # matrix and most of each micro-tile would be padding
        algo = "packed" if fmas >= PACKED_MIN_FMAS and min(g.m, g.n) >= 8 and compute_type(
            g.dtype) in ("float", "double") else "tile"
    return {"algo": algo, "mr": bl.mr, "nr": bl.nr, "kc": bl.kc, "mc": bl.mc, "nc": bl.nc}


def capture_fragment(k: KernelCtx, fn: Callable[[], Any]) -> tuple[list[str], Any]:
    """Statements ``fn`` emits into ``k`` (in their own value-numbering scope) and its result."""
    saved, k.lines = k.lines, []
    k.scopes.append({})
    try:
        out = fn()
        return k.lines, out
    finally:
        k.lines = saved
        k.scopes.pop()


def contiguous_element(k: KernelCtx, x: Any, idx: list[Ix], ctype: str) -> str | None:
    """``buf[offset]`` of ``x[idx]`` when ``x`` is a buffer stored in ``ctype`` with its last
    dim innermost, so that the next last-dim indices are the next elements (a run of them can
    be copied as a block); None where ``x`` is computed, converted or laid out otherwise."""
    name = k.realized.get(x.id)
    if name is None or compute_type(x.dtype) != ctype or load_expr(x.dtype, "v") != "v":
        return None
    order = k.layouts.get(name)
    if order is not None and order[-1] != len(x.shape) - 1:
        return None
    return f"{name}[{k.flat(name, x, idx).render()}]"


def input_run(k: KernelCtx, x: Any, image: Ix, cin: Ix, raws: list[str], count: str,
              step: int, ctype: str, stmts: list[str], conds: tuple[str, ...] = ()
              ) -> PackedRun:
    """A run of ``count`` elements of the input ``x[image, cin, *raws]``, the last position
    ``step`` apart (a packed convolution run, ``GemmProblem.b_run``), after the run's own
    ``stmts``: inside where ``conds`` hold and the outer positions are, for the lanes whose
    last position lies in ``[0, size)`` (padding at either end is zeros); the block-copy
    element of lane ``kw_lo`` at step 1 (:func:`contiguous_element`)."""
    isp = x.shape[2:]
    raw, size = raws[-1], isp[-1]
    if step == 1:
        lo = f"kw_min(kw_max(-({raw}), 0), {count})"
        hi = f"kw_max(kw_lo, kw_min({size} - ({raw}), {count}))"
    else:  # lane l is inside when 0 <= raw + l * step < size
        lo = f"({raw}) >= 0 ? 0 : kw_min((-({raw}) + {step - 1}) / {step}, {count})"
        hi = (f"kw_max(kw_lo, {size} - ({raw}) > 0 ? kw_min(({size} - ({raw}) + {step - 1}) / "
              f"{step}, {count}) : 0)")

    def at(last: str) -> list[Ix]:
        pos = [Ix.atom(r, (0, isp[d] - 1)) for d, r in enumerate([*raws[:-1], last])]
        return [image, cin, *pos]

    fstmts, first = capture_fragment(k, lambda: contiguous_element(
        k, x, at(k.let(f"{raw} + kw_lo", "int")), ctype) if step == 1 else None)
    lstmts, value = capture_fragment(
        k, lambda: x.load(k, at(k.let(f"{raw} + kw_l * {step}", "int"))))
    inside = [*conds, *(f"{r} >= 0 && {r} < {isp[d]}" for d, r in enumerate(raws[:-1]))]
    whole = f"{raw} >= 0 && {raw} + ({count} - 1) * {step} < {size}"
    return PackedRun(stmts=stmts, inside=" && ".join(inside) or "true", whole=whole, lo=lo, hi=hi,
                     lane_stmts=lstmts, lane_value=value, first_stmts=fstmts, first=first)


def index_atoms(k: KernelCtx, flat: str, shape: tuple[int, ...], prefix: str) -> list[Ix]:
    """``flat`` unravelled over ``shape``: one named int per dimension, with its range."""
    out = []
    for j, e in enumerate(unravel(Ix.atom(flat, (0, math.prod(shape) - 1)), shape)):
        name = k.fresh(prefix)
        k.emit(f"const int {name} = {e.render()};")
        out.append(Ix.atom(name, (0, shape[j] - 1)))
    return out


def _batch_ix(k: KernelCtx, batch: tuple[int, ...], b: str) -> list[Ix]:
    out, rest = [], b
    for j, size in enumerate(batch):
        inner = math.prod(batch[j + 1:])
        name = k.fresh("kw_bi")
        k.emit(f"const int {name} = {rest} / {inner} % {size};")
        out.append(Ix.atom(name, (0, size - 1)))
    return out


def lowered_gemm(k: KernelCtx, g, params: dict[str, Any],
                 finish: Callable[[list[Ix], str], None],
                 strides_of: Callable[..., dict[str, int]],
                 source: Callable[..., tuple[str, Any]] = gemm_source) -> tuple[str, Any]:
    """``(helpers, body)`` of the packed GEMM of IR node ``g``; ``finish(idx, v)`` emits the
    store of the finished element ``v`` at output index ``idx`` (with the group's epilogue);
    ``strides_of(k, load, idx)`` probes an operand's element strides per index variable;
    ``source(problem, blocking)`` writes the GEMM (default: the C++ packed micro-kernel)."""
    isa = detect_isa()
    ct = compute_type(g.dtype)
    m, n, kd, batch = g.m, g.n, g.kdim, tuple(g.batch)
    nb = math.prod(batch) if batch else 1

    def mn(i: str, size: int) -> Ix:
        return Ix.atom(i, (0, size - 1))

    probe_b = [Ix.var(f"kw_pb{j}", s) for j, s in enumerate(batch)]
    sa = strides_of(k, g.a, probe_b + [Ix.var("kw_pm", m), Ix.var("kw_pk", kd)])
    sb = strides_of(k, g.b, probe_b + [Ix.var("kw_pk", kd), Ix.var("kw_pn", n)])
    big = 1 << 62
    prob = GemmProblem(
        nb, m, n, kd, ct,
        load_a=lambda b, i, kk: capture_fragment(k, lambda: g.a(k, _batch_ix(k, batch, b) + [
            mn(i, m), mn(kk, kd)])),
        load_b=lambda b, kk, j: capture_fragment(k, lambda: g.b(k, _batch_ix(k, batch, b) + [
            mn(kk, kd), mn(j, n)])),
        store=lambda b, i, j, v: capture_fragment(k, lambda: finish(_batch_ix(k, batch, b) + [
            mn(i, m), mn(j, n)], v))[0],
        # an unprobeable operand (empty strides) counts as batched and row-major
        a_batched=not sa or any(sa.get(f"kw_pb{j}", 0) for j in range(len(batch))),
        b_batched=not sb or any(sb.get(f"kw_pb{j}", 0) for j in range(len(batch))),
        a_k_contig=sa.get("kw_pk", big) <= sa.get("kw_pm", big),
        b_n_contig=sb.get("kw_pn", big) <= sb.get("kw_pk", big))
    bl = default_blocking(isa, ct)
    over = {p: int(params[p]) for p in ("mr", "nr", "kc", "mc", "nc") if p in params}
    if ct == "double" and "nr" in over:  # double lanes: half the float columns
        over["nr"] = max(isa.width(ct), over["nr"] // 2)
    bl = replace(bl, **over, threads=str(params.get("threads", "auto")))
    return source(prob, bl)
