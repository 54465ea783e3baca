"""Emit one kernel per fusion group for SYCL, CUDA or C++/OpenMP from the same IR.

Every kernel is a set of *units* of work: elements (pointwise), rows (row groups, scans),
register tiles (GEMM, convolution). SYCL and CUDA run one unit per work-item; C++ runs them
in an OpenMP ``parallel for``. Row groups also have a cooperative form on SYCL/CUDA: one
work-group per row, partial results per work-item combined with a group reduction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dialect import Dialect
from kernelwright.tools.lower.dtypes import compute_type, literal, storage_type
from kernelwright.tools.lower.index import Ix, linear, unravel
from kernelwright.tools.lower.ir import Node, Reduction, Scan
from kernelwright.tools.lower.microkernels.lowered import lowered_gemm
from kernelwright.tools.lower.microkernels.lowered_conv import lowered_conv
from kernelwright.tools.lower.schedule import Group


@dataclass
class KernelSource:
    """One emitted kernel: its text, arguments (buffer names) and launch shape."""

    name: str
    text: str
    args: list[str]
    units: int  # work-items (SYCL/CUDA global size before rounding)
    local: int  # work-group size (1 for C++)
    cooperative: bool = False
    info: dict[str, Any] = field(default_factory=dict)


def _ctx(d: Dialect, real: dict[int, str], grp: Group, idx_type: str) -> KernelCtx:
    k = KernelCtx(d, {i: n for i, n in real.items() if i not in {x.id for x in grp.nodes}},
                  idx_type=idx_type)
    k.owned = {x.id for x in grp.nodes}
    return k


def _vars(k: KernelCtx, flat: Ix, shape: tuple[int, ...], prefix: str) -> list[Ix]:
    """Declare the multi-index of ``flat`` in ``shape`` as named atoms with ranges."""
    out = []
    for j, e in enumerate(unravel(flat, shape)):
        if e.is_const:
            out.append(e)
            continue
        name = f"{prefix}{j}"
        k.emit(f"const {k.idx_type} {name} = {e.render()};")
        out.append(Ix.atom(name, (0, shape[j] - 1)))
    return out


def _store_node(k: KernelCtx, node: Node, names: dict[int, str], idx: list[Ix],
                value: str) -> None:
    if node.id in names:
        k.store(names[node.id], node, idx, value)


def _write_epilogue(k: KernelCtx, anchor_shape, anchor_idx: list[Ix], nodes: list[Node],
                    names: dict[int, str]) -> None:
    flat = linear(anchor_idx, anchor_shape)
    for e in nodes:
        idx = anchor_idx if tuple(e.shape) == tuple(anchor_shape) else unravel(flat, e.shape)
        v = e.load(k, idx)
        k.bind(e, e.key(idx), v)
        _store_node(k, e, names, idx, v)


# -- pointwise ---------------------------------------------------------------------------


def pointwise_body(k: KernelCtx, grp: Group, names: dict[int, str], u: str,
                   ipw: int) -> int:
    node = grp.main[0]
    n = node.numel
    if k.dialect.name == "cpp" and node.shape and node.shape[-1] >= 8:
        return pointwise_rows_cpp(k, node, names, u)
    units = -(-n // ipw)
    if ipw == 1:
        idx = _vars(k, Ix.atom(u, (0, n - 1)), node.shape, "i")
        _write(k, node, names, idx)
        return units
    with k.block(f"for (int e = 0; e < {ipw}; ++e)"):
        k.emit(f"const {k.idx_type} f = {u} * {ipw} + e;")
        with k.block(f"if (f < {n})"):
            idx = _vars(k, Ix.atom("f", (0, n - 1)), node.shape, "i")
            _write(k, node, names, idx)
    return units


def pointwise_rows_cpp(k: KernelCtx, node: Node, names: dict[int, str], u: str) -> int:
    """C++: a unit is a row (or a chunk of one) of the last dim, an OpenMP simd loop, so
    index math is affine in the loop variable and contiguous operands load as vectors.
    Few long rows are cut into chunks so that every thread gets work."""
    cols = node.shape[-1]
    rows = node.numel // cols
    nchunk = 1 if rows >= 32 else max(1, min(-(-cols // 256), -(-32 // rows)))
    ch = -(-cols // nchunk)
    if nchunk == 1:
        k.emit(f"const {k.idx_type} row = {u};")
        lo, hi = "0", str(cols)
    else:
        k.emit(f"const {k.idx_type} row = {u} / {nchunk};")
        k.emit(f"const {k.idx_type} c0 = {u} % {nchunk} * {ch};")
        k.emit(f"const {k.idx_type} c1 = kw_min(c0 + {ch}, ({k.idx_type}){cols});")
        lo, hi = "c0", "c1"
    outer = _vars(k, Ix.atom("row", (0, rows - 1)), tuple(node.shape[:-1]), "i")
    k.emit("#pragma omp simd")
    with k.block(f"for ({k.idx_type} j = {lo}; j < {hi}; ++j)"):
        _write(k, node, names, outer + [Ix.var("j", cols)])
    return rows * nchunk


def _write(k: KernelCtx, node: Node, names: dict[int, str], idx: list[Ix]) -> None:
    k.owned.discard(node.id)
    v = node.compute(k, idx)
    k.store(names[node.id], node, idx, v)


# -- row groups --------------------------------------------------------------------------


class StashMismatch(Exception):
    """The epilogue read a stashed element at another index: emit without the stash."""


def _stash_of(k: KernelCtx, grp: Group, names: dict[int, str]):
    """``(reduction, stashed node, output buffer, epilogue node)`` when a reduction of the
    group sums a node directly (``Reduction.direct``, softmax's exponentials) that its one
    epilogue reads and whose output has that node's shape and (non-half) dtype: the reduction
    pass then writes each element to the output and the epilogue reads it back."""
    if len(grp.epilogue) != 1:
        return None
    e = grp.epilogue[0]
    for r in grp.main:
        src = r.direct
        if (src is not None and src.id not in k.realized and e.id in names
                and any(dep is src for dep in e.deps) and tuple(e.shape) == tuple(src.shape)
                and e.dtype == src.dtype and e.dtype in (torch.float32, torch.float64)):
            return r, src, names[e.id], e
    return None


def _epilogue_from_stash(k: KernelCtx, dom: Reduction, outer: list[Ix], lid: str | None,
                         wg: int, grp: Group, names: dict[int, str]) -> None:
    _, src, buf, e = k.stash
    loads: list[tuple[Ix, Ix]] = []
    plain = k.load_buffer

    def load_buffer(name, node, ix):
        if name == buf:
            loads.append((linear(ix, node.shape), want[0]))
        return plain(name, node, ix)

    want: list[Ix] = [Ix.c(0)]

    def write(idx):
        want[0] = linear(idx, tuple(dom.src_shape))
        _write_epilogue(k, dom.src_shape, idx, grp.epilogue, names)

    k.realized[src.id] = buf
    k.load_buffer = load_buffer  # type: ignore[method-assign]
    try:
        _over_row(k, dom, outer, lid, wg, write, "")
    finally:
        del k.realized[src.id]
        k.load_buffer = plain  # type: ignore[method-assign]
    if any(got != at for got, at in loads):
        raise StashMismatch(e.name)


def _stash_store(k: KernelCtx, r: Reduction, idx: list[Ix], value: str) -> None:
    if k.stash is not None and k.stash[0] is r:
        _, src, buf, e = k.stash
        k.store(buf, e, idx, value)


def rows_body(k: KernelCtx, grp: Group, names: dict[int, str], unit: str, lid: str | None,
              wg: int, stash: bool = True) -> int:
    """One row (outer index) per unit; ``lid``/``wg`` split the row over a work-group."""
    dom: Reduction = grp.domain  # type: ignore[assignment]
    outer_shape = tuple(dom.src_shape[d] for d in dom.outer_dims)
    n_outer = math.prod(outer_shape)
    outer = _vars(k, Ix.atom(unit, (0, max(0, n_outer - 1))), outer_shape, "o")
    k.stash = _stash_of(k, grp, names) if stash else None
    for r in grp.main:
        _reduce_phase(k, r, outer, lid, wg)
    if grp.epilogue:
        if k.stash is None:
            _over_row(k, dom, outer, lid, wg, lambda idx: _write_epilogue(
                k, dom.src_shape, idx, grp.epilogue, names), "")
        else:
            _epilogue_from_stash(k, dom, outer, lid, wg, grp, names)
    stored = [r for r in grp.main if r.id in names]
    if stored:
        with k.block("if (l == 0)" if lid is not None else ""):
            for r in stored:
                _store_node(k, r, names, _out_index(r, outer), k.bound[r.id][0].var)
    if grp.outer:
        def outer_out():
            oflat = linear(outer, outer_shape)
            for e in grp.outer:
                idx = unravel(oflat, e.shape)
                v = e.load(k, idx)
                _store_node(k, e, names, idx, v)
        if lid is None:
            outer_out()
        else:
            with k.block(f"if ({lid} == 0)"):
                outer_out()
    return n_outer


def _out_index(r: Reduction, outer: list[Ix]) -> list[Ix]:
    if not r.keepdim:
        return outer
    it = iter(outer)
    return [Ix.c(0) if d in r.red_dims else next(it) for d in range(len(r.src_shape))]


def _over_row(k: KernelCtx, dom: Reduction, outer: list[Ix], lid: str | None, wg: int,
              fn, simd: str | None = None) -> None:
    """Run ``fn(full index)`` for every element of the row (strided over the group).

    ``simd``: on C++, the OpenMP ``simd`` clause for the innermost loop (a reduction clause
    for reduction phases, empty for epilogues); g++ then vectorises along the row.
    """
    sizes = dom.red_sizes
    if lid is None:
        opened, rv = [], []
        for j, s in enumerate(sizes):
            name = k.fresh("r")
            if simd is not None and j == len(sizes) - 1 and k.dialect.name == "cpp":
                k.emit(f"#pragma omp simd{simd}")
            cm = k.loop(name, s)
            rv.append(cm.__enter__())
            opened.append(cm)
        fn(dom.full_index(outer, rv))
        for cm in reversed(opened):
            cm.__exit__(None, None, None)
        return
    n = math.prod(sizes)
    r = k.fresh("r")
    with k.block(f"for ({k.idx_type} {r} = {lid}; {r} < {n}; {r} += {wg})"):
        red = _vars(k, Ix.atom(r, (0, n - 1)), tuple(sizes), f"{r}_")
        fn(dom.full_index(outer, red))


def simd_clause(r: Reduction, acc: str, pos: str | None) -> str | None:
    """The OpenMP simd reduction clause for ``acc`` (None: keep the loop scalar)."""
    if pos is not None:
        return None
    ct = r.acc_ctype()
    if r.op in ("sum", "prod"):
        return f" reduction({'+' if r.op == 'sum' else '*'}:{acc})"
    if r.op in ("max", "min"):
        if ct in ("float", "double"):
            return f" reduction(kw_{r.op}r:{acc})"
        return f" reduction({r.op}:{acc})"
    return None


LANE_OPS = ("sum", "prod", "max", "min")


def _reduce_lanes(k: KernelCtx, r: Reduction, outer: list[Ix], acc: str) -> None:
    """One work-item's reduction of a row in ``k.lanes`` independent partial results.

    The innermost reduced dim is walked ``V`` elements at a time, element ``e`` of each step
    combined into lane ``e``: no dependence between lanes, so the device compiler vectorises
    the step (contiguous loads along rows); the rest of the row goes into ``acc``, then the
    lanes. On the SYCL CPU device this is what the hand-written ``sycl::vec`` row kernels did,
    for any fused body.
    """
    from kernelwright.tools.lower.ir import REDUCE_INIT

    V = k.lanes
    ct = r.acc_ctype()
    lane = k.fresh("lane")
    k.emit(f"{ct} {lane}[{V}];")
    k.emit(f"for (int e = 0; e < {V}; ++e) {lane}[e] = {literal(REDUCE_INIT[r.op], r.acc_dtype)};")
    sizes = r.red_sizes
    opened, rv = [], []
    for s in sizes[:-1]:
        cm = k.loop(k.fresh("r"), s)
        rv.append(cm.__enter__())
        opened.append(cm)
    n = sizes[-1]
    full = n // V * V
    j, e, rj = k.fresh("j"), k.fresh("e"), k.fresh("rj")
    with k.block(f"for (int {j} = 0; {j} < {full}; {j} += {V})"):
        with k.block(f"for (int {e} = 0; {e} < {V}; ++{e})"):
            k.emit(f"const int {rj} = {j} + {e};")
            assert r.body is not None
            full_idx = r.full_index(outer, rv + [Ix.atom(rj, (0, n - 1))])
            v = r.body(k, full_idx)
            _stash_store(k, r, full_idx, v)
            r.combine(k, f"{lane}[{e}]", None, v, "0")
    if full < n:
        with k.block(f"for (int {rj} = {full}; {rj} < {n}; ++{rj})"):
            full_idx = r.full_index(outer, rv + [Ix.atom(rj, (0, n - 1))])
            v = r.body(k, full_idx)
            _stash_store(k, r, full_idx, v)
            r.combine(k, acc, None, v, "0")
    for cm in reversed(opened):
        cm.__exit__(None, None, None)
    with k.block(f"for (int {e} = 0; {e} < {V}; ++{e})"):
        r.combine(k, acc, None, f"{lane}[{e}]", "0")


def _reduce_phase(k: KernelCtx, r: Reduction, outer: list[Ix], lid: str | None,
                  wg: int) -> None:
    acc, pos = r.init(k)
    # float accumulators only: double lane arrays crash the SYCL CPU device's vectoriser
    # (vplan-vec, layer norm over 4099 floats, whose sums accumulate in double)
    if (lid is None and k.lanes > 1 and pos is None and r.op in LANE_OPS
            and r.acc_ctype() == "float" and r.red_sizes and r.red_sizes[-1] >= k.lanes):
        _reduce_lanes(k, r, outer, acc)
        k.bind(r, outer, r.finish(k, acc, pos))
        return

    def step(idx):
        assert r.body is not None
        v = r.body(k, idx)
        _stash_store(k, r, idx, v)
        flat = linear([idx[d] for d in r.red_dims], tuple(r.red_sizes))
        r.combine(k, acc, pos, v, flat.render())

    _over_row(k, r, outer, lid, wg, step, simd_clause(r, acc, pos))
    if lid is not None:
        acc, pos = _group_combine(k, r, acc, pos)
    value = r.finish(k, acc, pos)
    k.bind(r, outer, value)


def _group_combine(k: KernelCtx, r: Reduction, acc: str, pos: str | None):
    d = k.dialect
    group = "it.get_sub_group()" if k.subgroup else "it.get_group()"
    ct = r.acc_ctype()
    op = {"sum": "plus", "prod": "multiplies", "max": "maximum", "min": "minimum",
          "any": "logical_or", "all": "logical_and", "argmax": "maximum",
          "argmin": "minimum"}[r.op]
    total = k.let(d_group_reduce(d, acc, ct, op, group), ct)
    if pos is None:
        return total, None
    cand = k.let(f"({acc} == {total} ? {pos} : 9223372036854775807LL)", "long long")
    best = k.let(d_group_reduce(d, cand, "long long", "minimum", group), "long long")
    return total, best


def d_group_reduce(d: Dialect, v: str, ct: str, op: str, group: str) -> str:
    if d.name == "sycl":
        return f"sycl::reduce_over_group({group}, {v}, sycl::{op}<{ct}>())"
    return f"kw_block_reduce<{ct}>({v}, kw_op_{op}<{ct}>(), kw_smem)"


# -- scans -------------------------------------------------------------------------------


def scan_body(k: KernelCtx, grp: Group, names: dict[int, str], unit: str) -> int:
    s: Scan = grp.main[0]  # type: ignore[assignment]
    shape = tuple(s.shape)
    lines = tuple(x for d, x in enumerate(shape) if d != s.dim)
    n = math.prod(lines)
    outer = _vars(k, Ix.atom(unit, (0, max(0, n - 1))), lines, "o")
    # a float running sum or product is carried in double, as torch's CPU cumsum does: in float
    # a 4001-long prefix sum drifts 3e-4 from the exact one (torch's: 8e-6)
    acc_t = "double" if s.ctype == "float" else s.ctype
    acc = k.var(acc_t, literal(0 if s.op == "sum" else 1, s.dtype))
    with k.loop("j", shape[s.dim]) as j:
        idx = outer[:s.dim] + [j] + outer[s.dim:]
        assert s.body is not None
        v = s.body(k, idx)
        k.emit(f"{acc} {'+' if s.op == 'sum' else '*'}= {v};")
        cur = k.let(f"({s.ctype}){acc}" if acc_t != s.ctype else acc, s.ctype)
        k.bind(s, idx, cur)
        _store_node(k, s, names, idx, cur)
        _write_epilogue(k, shape, idx, grp.epilogue, names)
    return n


# -- GEMM --------------------------------------------------------------------------------


def gemm_body(k: KernelCtx, grp: Group, names: dict[int, str], unit: str, rm: int,
              rn: int) -> int:
    g = grp.main[0]
    nb = math.prod(g.batch) if g.batch else 1
    mt, nt = -(-g.m // rm), -(-g.n // rn)
    units = nb * mt * nt
    k.emit(f"const int bt = {unit} / {mt * nt};")
    k.emit(f"const int m0 = ({unit} / {nt}) % {mt} * {rm};")
    k.emit(f"const int n0 = {unit} % {nt} * {rn};")
    batch = _vars(k, Ix.atom("bt", (0, nb - 1)), tuple(g.batch), "b") if g.batch else []
    ct = compute_type(g.dtype)
    acc = [[k.var(ct, literal(0, g.dtype), "acc") for _ in range(rn)] for _ in range(rm)]
    rows = [k.let(f"kw_min(m0 + {r}, {g.m - 1})", "int") for r in range(rm)]
    cols = [k.let(f"kw_min(n0 + {s}, {g.n - 1})", "int") for s in range(rn)]
    with k.loop("kk", g.kdim) as kk:
        av = [g.a(k, batch + [Ix.atom(rows[r], (0, g.m - 1)), kk]) for r in range(rm)]
        bv = [g.b(k, batch + [kk, Ix.atom(cols[s], (0, g.n - 1))]) for s in range(rn)]
        for r in range(rm):
            for s in range(rn):
                k.emit(f"{acc[r][s]} += {av[r]} * {bv[s]};")
    for r in range(rm):
        for s in range(rn):
            with k.block(f"if (m0 + {r} < {g.m} && n0 + {s} < {g.n})"):
                idx = batch + [Ix.atom(rows[r], (0, g.m - 1)), Ix.atom(cols[s], (0, g.n - 1))]
                k.bind(g, idx, acc[r][s])
                _store_node(k, g, names, idx, acc[r][s])
                _write_epilogue(k, g.shape, idx, grp.epilogue, names)
    return units


def operand_strides(k: KernelCtx, body, idx: list[Ix]) -> dict[str, int]:
    """Element strides of the buffer loads ``body(idx)`` makes, per loop variable of ``idx``.

    A variable a load does not use has stride 0; one several loads use with different strides
    gets the largest. Emits into a throwaway context (nothing reaches ``k``)."""
    probe = KernelCtx(k.dialect, dict(k.realized), idx_type=k.idx_type)
    probe.owned = set(k.owned)
    probe.bound = {i: list(b) for i, b in k.bound.items()}
    seen: dict[str, int] = {}
    orig = probe.load_buffer

    def load_buffer(name, node, ix):
        flat = linear(ix, node.shape)
        for atom, coef in flat.terms:
            seen[atom] = max(seen.get(atom, 0), abs(coef))
        return orig(name, node, ix)

    probe.load_buffer = load_buffer  # type: ignore[method-assign]
    try:
        body(probe, idx)
    except Exception:  # a value that cannot be probed: say "not contiguous"
        return {}
    return seen


def gemm_body_cpp(k: KernelCtx, grp: Group, names: dict[int, str], unit: str, rm: int,
                  rn: int, form: str) -> int:
    """C++ GEMM tile: ``rm`` rows x ``rn`` columns of C per unit (an OpenMP iteration).

    ``nvec``: for each k, C[r, :] += A[r, k] * B[k, :] with the ``rn`` columns an OpenMP simd
    loop (contiguous when B is stored K x N); the last column tile clamps its loads.
    ``kdot``: rm x rn dot products along k, one simd reduction (A and B both stored along
    k, e.g. nn.Linear's N x K weight). ``auto`` picks from the operands' strides.
    """
    g = grp.main[0]
    nb = math.prod(g.batch) if g.batch else 1
    ct = compute_type(g.dtype)
    if form == "auto":
        kv = Ix.var("kw_probe_k", g.kdim)
        nv = Ix.var("kw_probe_n", g.n)
        zero = [Ix.c(0)] * len(g.batch)
        bs = operand_strides(k, g.b, zero + [kv, nv])
        as_ = operand_strides(k, g.a, zero + [Ix.c(0), kv])
        kdot = (bs.get("kw_probe_n") != 1 and bs.get("kw_probe_k") == 1
                and as_.get("kw_probe_k") == 1)
        form = "kdot" if kdot else "nvec"
    if form == "kdot":
        rn = min(rn, 4)
        rm = min(rm, 4)
    rm, rn = max(1, min(rm, g.m)), max(1, min(rn, g.n))
    mt, nt = -(-g.m // rm), -(-g.n // rn)
    units = nb * mt * nt
    k.emit(f"const int bt = {unit} / {mt * nt};")
    k.emit(f"const int n0 = ({unit} / {mt}) % {nt} * {rn};")
    k.emit(f"const int m0 = {unit} % {mt} * {rm};")
    batch = _vars(k, Ix.atom("bt", (0, nb - 1)), tuple(g.batch), "b") if g.batch else []
    rows = [k.let(f"kw_min(m0 + {r}, {g.m - 1})", "int") for r in range(rm)]
    row_ix = [Ix.atom(rw, (0, g.m - 1)) for rw in rows]
    zero = literal(0, g.dtype)
    if form == "kdot":
        cols = [k.let(f"kw_min(n0 + {s}, {g.n - 1})", "int") for s in range(rn)]
        col_ix = [Ix.atom(c, (0, g.n - 1)) for c in cols]
        acc = [[k.var(ct, zero, "acc") for _ in range(rn)] for _ in range(rm)]
        flat = ",".join(a for row in acc for a in row)
        k.emit(f"#pragma omp simd reduction(+:{flat})")
        with k.loop("kk", g.kdim) as kk:
            av = [g.a(k, batch + [row_ix[r], kk]) for r in range(rm)]
            bv = [g.b(k, batch + [kk, col_ix[s]]) for s in range(rn)]
            for r in range(rm):
                for s in range(rn):
                    k.emit(f"{acc[r][s]} += {av[r]} * {bv[s]};")
        init = ", ".join("{" + ", ".join(row) + "}" for row in acc)
        k.emit(f"{ct} acc[{rm}][{rn}] = {{{init}}};")
    else:
        k.emit(f"{ct} acc[{rm}][{rn}];")
        with k.block(f"for (int r = 0; r < {rm}; ++r)"):
            k.emit("#pragma omp simd")
            with k.block(f"for (int s = 0; s < {rn}; ++s)"):
                k.emit(f"acc[r][s] = {zero};")

        def tile(col: str) -> None:
            with k.loop("kk", g.kdim) as kk:
                av = [g.a(k, batch + [row_ix[r], kk]) for r in range(rm)]
                k.emit("#pragma omp simd")
                with k.block(f"for (int s = 0; s < {rn}; ++s)"):
                    # one atom with the column's exact range keeps index maps simple
                    k.emit(f"const int nc = {col};")
                    b = g.b(k, batch + [kk, Ix.atom("nc", (0, g.n - 1))])
                    for r in range(rm):
                        k.emit(f"acc[{r}][s] += {av[r]} * {b};")

        if g.n % rn == 0:
            tile("n0 + s")
        else:
            with k.block(f"if (n0 + {rn} <= {g.n})"):
                tile("n0 + s")
            with k.block("else"):
                tile(f"kw_min(n0 + s, {g.n - 1})")
    with k.block(f"for (int r = 0; r < {rm}; ++r)"):
        with k.block(f"if (m0 + r < {g.m})"):
            with k.block(f"for (int s = 0; s < {rn}; ++s)"):
                with k.block(f"if (n0 + s < {g.n})"):
                    k.emit("const int mi = m0 + r;")
                    k.emit("const int ni = n0 + s;")
                    idx = batch + [Ix.atom("mi", (0, g.m - 1)), Ix.atom("ni", (0, g.n - 1))]
                    v = k.let("acc[r][s]", ct)
                    k.bind(g, idx, v)
                    _store_node(k, g, names, idx, v)
                    _write_epilogue(k, g.shape, idx, grp.epilogue, names)
    return units


def packed_gemm_cpp(k: KernelCtx, grp: Group, names: dict[int, str],
                    params: dict[str, Any]) -> KernelSource:
    """C++ GEMM, or convolution as implicit GEMM, on the packed, cache-blocked micro-kernel
    (tools/lower/microkernels)."""
    g = grp.main[0]

    def finish(idx: list[Ix], v: str) -> None:
        k.bind(g, idx, v)
        _store_node(k, g, names, idx, v)
        _write_epilogue(k, g.shape, idx, grp.epilogue, names)

    helpers, body = (lowered_conv(k, g, params, finish) if grp.kind == "conv"
                     else lowered_gemm(k, g, params, finish, operand_strides))
    args, decl = signature(k)
    text = helpers + f'extern "C" void {grp.name}({decl}) {{\n' + "\n".join(body) + "\n}\n"
    return KernelSource(grp.name, text, args, 1, 1, info={
        "kind": grp.kind, "nodes": [n.name for n in grp.nodes],
        "reads": sorted(nm for nm, (_, mode) in k.buffers.items() if mode == "r")})


# -- convolution -------------------------------------------------------------------------


def conv_body(k: KernelCtx, grp: Group, names: dict[int, str], unit: str, ocb: int) -> int:
    """Direct convolution: a unit is (n, block of ``ocb`` output channels, one position)."""
    c = grp.main[0]
    x, w = c.x, c.w
    nd = len(x.shape) - 2
    N, Co = c.shape[0], c.shape[1]
    osp = tuple(c.shape[2:])
    isp = tuple(x.shape[2:])
    ksz = tuple(w.shape[2:])
    G = c.groups
    cin_g = x.shape[1] // G
    cout_g = Co // G
    ocb = max(1, min(ocb, cout_g))
    while cout_g % ocb:
        ocb -= 1
    nblk = Co // ocb
    P = math.prod(osp)
    units = N * nblk * P
    k.emit(f"const int p = {unit} % {P};")
    k.emit(f"const int cb = ({unit} / {P}) % {nblk};")
    k.emit(f"const int nn = {unit} / {P * nblk};")
    pos = _vars(k, Ix.atom("p", (0, P - 1)), osp, "q")
    k.emit(f"const int oc0 = cb * {ocb};")
    k.emit(f"const int g = oc0 / {cout_g};")
    ct = compute_type(c.dtype)
    acc = [k.var(ct, literal(0, c.dtype), "acc") for _ in range(ocb)]
    nI = Ix.atom("nn", (0, N - 1))
    with k.loop("ic", cin_g) as ic:
        cin = k.let(f"g * {cin_g} + {ic.render()}", "int")
        opened, taps, ipos = [], [], []
        for d in range(nd):
            # fresh names: a fixed "t{d}" collided with the let names (t1, t2, ...) when nd = 3
            cm = k.loop(k.fresh("tap"), ksz[d])
            taps.append(cm.__enter__())
            opened.append(cm)
        conds = []
        for d in range(nd):
            o = pos[d].render()
            t = taps[d].render()
            s, p, dl = c.stride[d], c.padding[d], c.dilation[d]
            if not c.transposed:
                ipos.append(k.let(f"({o}) * {s} - {p} + {t} * {dl}", "int"))
                conds.append(f"{ipos[-1]} >= 0 && {ipos[-1]} < {isp[d]}")
            else:
                num = k.let(f"({o}) + {p} - {t} * {dl}", "int")
                ipos.append(k.let(f"{num} / {s}", "int"))
                conds.append(f"{num} >= 0 && {num} % {s} == 0 && {ipos[-1]} < {isp[d]}")
        with k.block(f"if ({' && '.join(conds) or 'true'})"):
            xi = [nI, Ix.atom(cin, (0, x.shape[1] - 1))] + [
                Ix.atom(ip, (0, s - 1)) for ip, s in zip(ipos, isp, strict=True)]
            xv = x.load(k, xi)
            for j in range(ocb):
                ocj = k.let(f"oc0 + {j}", "int")
                if c.transposed:
                    wi = [Ix.atom(cin, (0, w.shape[0] - 1)),
                          Ix.atom(k.let(f"{ocj} - g * {cout_g}", "int"), (0, w.shape[1] - 1))]
                else:
                    wi = [Ix.atom(ocj, (0, Co - 1)), ic]
                wv = w.load(k, wi + taps)
                k.emit(f"{acc[j]} += {xv} * {wv};")
        for cm in reversed(opened):
            cm.__exit__(None, None, None)
    for j in range(ocb):
        ocj = k.let(f"oc0 + {j}", "int")
        idx = [nI, Ix.atom(ocj, (0, Co - 1))] + pos
        v = acc[j]
        if c.bias is not None:
            v = k.let(f"{acc[j]} + ({ct}){c.bias.load(k, [idx[1]])}", ct)
        k.bind(c, idx, v)
        _store_node(k, c, names, idx, v)
        _write_epilogue(k, c.shape, idx, grp.epilogue, names)
    return units


def conv_body_cpp(k: KernelCtx, grp: Group, names: dict[int, str], unit: str, ocb: int,
                  pw: int) -> int:
    """C++ direct convolution: a unit is (n, ``ocb`` output channels, one output row,
    ``pw`` positions along the last spatial dim); those positions are an OpenMP simd loop
    with ``ocb`` x ``pw`` accumulators, so input loads are contiguous along the row (stride
    1) and each weight is loaded once per tap. Out-of-range taps (padding, the row's last
    tile) load a clamped element and add zero."""
    c = grp.main[0]
    x, w = c.x, c.w
    nd = len(x.shape) - 2
    N, Co = c.shape[0], c.shape[1]
    osp, isp, ksz = tuple(c.shape[2:]), tuple(x.shape[2:]), tuple(w.shape[2:])
    G = c.groups
    cin_g, cout_g = x.shape[1] // G, Co // G
    ocb = max(1, min(ocb, cout_g))
    while cout_g % ocb:
        ocb -= 1
    nblk = Co // ocb
    W, IW = osp[-1], isp[-1]
    pw = max(1, min(pw, W))
    nwt = -(-W // pw)
    rows = math.prod(osp[:-1])
    units = N * nblk * rows * nwt
    k.emit(f"const int wt = {unit} % {nwt};")
    k.emit(f"const int rowi = ({unit} / {nwt}) % {rows};")
    k.emit(f"const int cb = ({unit} / {nwt * rows}) % {nblk};")
    k.emit(f"const int nn = {unit} / {nwt * rows * nblk};")
    pos = _vars(k, Ix.atom("rowi", (0, rows - 1)), osp[:-1], "q") if nd > 1 else []
    k.emit(f"const int oc0 = cb * {ocb};")
    k.emit(f"const int g = oc0 / {cout_g};")
    k.emit(f"const int w0 = wt * {pw};")
    ct = compute_type(c.dtype)
    zero = literal(0, c.dtype)
    k.emit(f"{ct} acc[{ocb}][{pw}];")
    jv, sv = k.fresh("j"), k.fresh("s")  # every local is declared once (no shadowing)
    with k.block(f"for (int {jv} = 0; {jv} < {ocb}; ++{jv})"):
        k.emit("#pragma omp simd")
        with k.block(f"for (int {sv} = 0; {sv} < {pw}; ++{sv})"):
            k.emit(f"acc[{jv}][{sv}] = {zero};")
    nI = Ix.atom("nn", (0, N - 1))
    s_l, p_l, d_l = c.stride[-1], c.padding[-1], c.dilation[-1]
    with k.loop("ic", cin_g) as ic:
        cin = k.let(f"g * {cin_g} + {ic.render()}", "int")
        opened, taps, ipos, conds = [], [], [], []
        for d in range(nd):
            cm = k.loop(f"kt{d}", ksz[d])
            taps.append(cm.__enter__())
            opened.append(cm)
        for d in range(nd - 1):
            o = pos[d].render()
            ipos.append(k.let(f"({o}) * {c.stride[d]} - {c.padding[d]} + kt{d} * "
                              f"{c.dilation[d]}", "int"))
            conds.append(f"{ipos[-1]} >= 0 && {ipos[-1]} < {isp[d]}")
        with k.block(f"if ({' && '.join(conds) or 'true'})"):
            wv = []
            for j in range(ocb):
                ocj = k.let(f"oc0 + {j}", "int")
                wv.append(w.load(k, [Ix.atom(ocj, (0, Co - 1)), ic] + taps))
            head = [nI, Ix.atom(cin, (0, x.shape[1] - 1))] + [
                Ix.atom(ip, (0, sz - 1)) for ip, sz in zip(ipos, isp[:-1], strict=True)]

            def row_loop(contiguous: bool) -> None:
                sv, iw, iwc = k.fresh("s"), k.fresh("iw"), k.fresh("iwc")
                k.emit("#pragma omp simd")
                with k.block(f"for (int {sv} = 0; {sv} < {pw}; ++{sv})"):
                    k.emit(f"const int {iw} = (w0 + {sv}) * {s_l} - {p_l} + kt{nd - 1} * "
                           f"{d_l};")
                    if contiguous:
                        xv = x.load(k, head + [Ix.atom(iw, (0, IW - 1))])
                    else:
                        k.emit(f"const int {iwc} = kw_min(kw_max({iw}, 0), {IW - 1});")
                        raw = x.load(k, head + [Ix.atom(iwc, (0, IW - 1))])
                        xv = k.let(f"({iw} >= 0 && {iw} < {IW} ? {raw} : {zero})", ct)
                    for j in range(ocb):
                        k.emit(f"acc[{j}][{sv}] += {xv} * {wv[j]};")

            if p_l == 0:  # interior tiles read inside the row: plain contiguous loads
                with k.block(f"if (w0 + {pw} <= {W})"):
                    row_loop(True)
                with k.block("else"):
                    row_loop(False)
            else:
                row_loop(False)
        for cm in reversed(opened):
            cm.__exit__(None, None, None)
    jv, sv = k.fresh("j"), k.fresh("s")
    with k.block(f"for (int {jv} = 0; {jv} < {ocb}; ++{jv})"):
        with k.block(f"for (int {sv} = 0; {sv} < {pw}; ++{sv})"):
            with k.block(f"if (w0 + {sv} < {W})"):
                k.emit(f"const int ocj = oc0 + {jv};")
                k.emit(f"const int ow = w0 + {sv};")
                idx = [nI, Ix.atom("ocj", (0, Co - 1))] + pos + [Ix.atom("ow", (0, W - 1))]
                v = k.let(f"acc[{jv}][{sv}]", ct)
                if c.bias is not None:
                    v = k.let(f"{v} + ({ct}){c.bias.load(k, [idx[1]])}", ct)
                k.bind(c, idx, v)
                _store_node(k, c, names, idx, v)
                _write_epilogue(k, c.shape, idx, grp.epilogue, names)
    return units


# -- kernel wrappers ---------------------------------------------------------------------


def signature(k: KernelCtx) -> tuple[list[str], str]:
    args, decls = [], []
    for name, (node, mode) in k.buffers.items():
        st = storage_type(node.dtype)
        const = "const " if mode == "r" else ""
        args.append(name)
        decls.append(f"{const}{st}* __restrict__ {name}")
    return args, ", ".join(decls)


SUB_GROUP = 16  # the SYCL CPU device's widest float sub-group (AVX-512)


# C++: below this many elements of work a kernel runs on the calling thread (waking the
# OpenMP team costs more than it saves; torch's own grain size is 32768 too)
PARALLEL_GRAIN = 32768


def wrap(d: Dialect, name: str, k: KernelCtx, units: int, wg: int, cooperative: bool,
         work: int | None = None, threads: str = "auto") -> KernelSource:
    """The kernel's text around its body. C++ ``threads``: ``auto`` runs the units on the
    OpenMP team when the work reaches ``PARALLEL_GRAIN``, ``team`` always, ``one`` never."""
    args, decl = signature(k)
    body = "\n".join(k.lines)
    if d.name == "cpp":
        team = {"team": True, "one": False}.get(
            threads, work is None or work >= PARALLEL_GRAIN)
        par = "#pragma omp parallel for schedule(static)\n" if units > 1 and team else ""
        text = (f'extern "C" void {name}({decl}) {{\n'
                f"{par}"
                f"  for (int u = 0; u < {units}; ++u) {{\n{body}\n  }}\n}}\n")
        return KernelSource(name, text, args, units, 1)
    if d.name == "sycl":
        prop = (f"SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::sub_group_size<{SUB_GROUP}>))\n"
                if k.subgroup else "")
        head = (f'extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))\n'
                f"{prop}void {name}({decl}) {{\n"
                f"    auto it = sycl::ext::oneapi::this_work_item::get_nd_item<1>();\n")
        if cooperative:
            head += ("    const int u = it.get_group(0);\n"
                     "    const int l = it.get_local_id(0);\n")
        else:
            head += f"    const int u = it.get_global_id(0);\n    if (u >= {units}) return;\n"
    else:
        head = f'extern "C" __global__ void __launch_bounds__({wg}) {name}({decl}) {{\n'
        if cooperative:
            head += ("    __shared__ double kw_smem_raw[" + str(wg) + "];\n"
                     "    void* kw_smem = kw_smem_raw;\n"
                     "    const int u = blockIdx.x;\n    const int l = threadIdx.x;\n")
        else:
            head += (f"    const int u = blockIdx.x * blockDim.x + threadIdx.x;\n"
                     f"    if (u >= {units}) return;\n")
    text = head + body + "\n}\n"
    return KernelSource(name, text, args, units, wg, cooperative)


CUDA_REDUCE = r"""
#define KW_OP(name, expr) template <typename T> struct kw_op_##name { \
    __device__ T operator()(T a, T b) const { return expr; } };
KW_OP(plus, a + b)
KW_OP(multiplies, a * b)
KW_OP(maximum, a > b ? a : b)
KW_OP(minimum, a < b ? a : b)
KW_OP(logical_or, a || b)
KW_OP(logical_and, a && b)
template <typename T, typename Op>
static __device__ T kw_block_reduce(T v, Op op, void* smem) {
    T* s = static_cast<T*>(smem);
    int l = threadIdx.x, n = blockDim.x;
    __syncthreads();
    s[l] = v;
    __syncthreads();
    for (int off = n / 2; off > 0; off >>= 1) {
        if (l < off) s[l] = op(s[l], s[l + off]);
        __syncthreads();
    }
    T r = s[0];
    __syncthreads();
    return r;
}
"""


def work_of(grp: Group) -> int:
    """Rough element operations of a group's kernel (for the C++ parallel threshold)."""
    node = grp.main[0]
    if grp.kind == "rows":
        src = math.prod(node.src_shape)  # type: ignore[attr-defined]
        return src * (len(grp.main) + (1 if grp.epilogue else 0))
    # multiply-adds are vectorised 8-16 at a time: count them per vector, so a small GEMM
    # (gemm_4d_batched: 0.4 M multiply-adds) stays on one thread
    if grp.kind == "gemm":
        return node.numel * node.kdim // 16  # type: ignore[attr-defined]
    if grp.kind == "conv":
        return node.numel * max(1, node.cost) // 16
    return node.numel * max(1, min(node.cost, 64))


def emit_group(grp: Group, d: Dialect, real: dict[int, str], names: dict[int, str],
               params: dict[str, Any], idx_type: str = "int") -> KernelSource:
    """Emit ``grp`` as a kernel named ``grp.name`` (raises NotFusable to split it)."""
    k = _ctx(d, real, grp, idx_type)
    k.depth = 1 if d.name != "cpp" else 2
    cooperative = False
    wg = int(params.get("wg", 128))
    if grp.kind == "pointwise":
        units = pointwise_body(k, grp, names, "u", int(params.get("ipw", 1)))
    elif grp.kind == "rows":
        strategy = params.get("strategy", "item")
        cooperative = d.name != "cpp" and strategy in ("group", "subgroup")
        if strategy == "lanes" and d.name != "cpp":
            k.lanes = int(params.get("lanes", 16))
        if cooperative and strategy == "subgroup":
            wg = SUB_GROUP if d.name == "sycl" else 32
            k.subgroup = d.name == "sycl"
        try:
            units = rows_body(k, grp, names, "u", "l" if cooperative else None, wg)
        except StashMismatch:
            k = _ctx(d, real, grp, idx_type)
            k.depth = 1 if d.name != "cpp" else 2
            k.subgroup = cooperative and strategy == "subgroup" and d.name == "sycl"
            if strategy == "lanes" and d.name != "cpp":
                k.lanes = int(params.get("lanes", 16))
            units = rows_body(k, grp, names, "u", "l" if cooperative else None, wg,
                              stash=False)
    elif grp.kind == "scan":
        units = scan_body(k, grp, names, "u")
    elif grp.kind == "gemm" and d.name == "cpp" and params.get("algo") == "packed":
        return packed_gemm_cpp(k, grp, names, params)
    elif grp.kind == "gemm" and d.name == "cpp":
        units = gemm_body_cpp(k, grp, names, "u", int(params.get("rm", 4)),
                              int(params.get("rn", 16)), str(params.get("form", "auto")))
    elif grp.kind == "gemm":
        units = gemm_body(k, grp, names, "u", int(params.get("rm", 2)), int(params.get("rn", 4)))
    elif grp.kind == "conv" and d.name == "cpp" and params.get("algo") == "gemm":
        return packed_gemm_cpp(k, grp, names, params)
    elif grp.kind == "conv" and d.name == "cpp" and not grp.main[0].transposed:
        units = conv_body_cpp(k, grp, names, "u", int(params.get("ocb", 4)),
                              int(params.get("pw", 16)))
    elif grp.kind == "conv":
        units = conv_body(k, grp, names, "u", int(params.get("ocb", 4)))
    else:
        raise ValueError(grp.kind)
    src = wrap(d, grp.name, k, units, wg, cooperative, work_of(grp),
               str(params.get("threads", "auto")))
    src.info = {"kind": grp.kind, "nodes": [n.name for n in grp.nodes],
                "reads": sorted(nm for nm, (_, mode) in k.buffers.items() if mode == "r")}
    return src
