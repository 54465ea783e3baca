"""C++ row groups (reductions, softmax, norms) under a structural schedule.

Parameters of a C++ row group (all optional; every combination is correct by construction):

- ``passes``: ``two`` reduces each reduction in its own sweep over the row; ``one`` (only
  for groups that have an online pair) makes one sweep for the statistics: softmax's max and
  exponential sum as a running max with a rescaled sum (online softmax), a norm's mean and
  centred sum of squares as block statistics merged as they come (Chan et al.). The row is
  walked in blocks of ``block`` elements along its last reduced dim, so each block is read
  from memory once and from L1 the second time.
- ``lanes``: 0 lets ``#pragma omp simd reduction`` vectorise; 8 or 16 keep that many partial
  results (independent accumulators) per reduction (``emit.rows._reduce_lanes``).
  Arg-reductions always run in lanes (8 for ``lanes=0``), first index on ties
  (``cpp_arg``).
- ``simdlen``: the ``simdlen`` clause of the simd loops (0: the compiler's choice).
- ``column`` (only where the rows lie side by side in memory, :mod:`cpp_columns`): 0 walks
  one row per unit, its elements ``stride`` apart; 8, 16 or 32 walk that many neighbouring rows
  at once as simd lanes. Two sweeps, no stash.
- ``stage`` (:mod:`cpp_stage`, where the reductions share a costly source): 1 computes the
  source once per row into a local array that the sweeps and the epilogue read; 0 fuses it
  into each sweep.
- A row group with a single row (a full reduction) runs its sweeps on the whole OpenMP team
  (``omp parallel for reduction``: per-thread partial results, combined by the runtime) when
  the wrapper's threads rule allows it.
"""

from __future__ import annotations

import math
from typing import Any

from kernelwright.tools.lower.backends.cpp_arg import arg_lanes_fit, reduce_arg_lanes
from kernelwright.tools.lower.backends.cpp_columns import (
    COLUMN_CHOICES,
    column_outer,
    column_rows,
    lanes,
)
from kernelwright.tools.lower.backends.cpp_stage import STAGE_CHOICES, row_source, staged
from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dtypes import literal
from kernelwright.tools.lower.emit.common import index_vars, store_node, write_epilogue
from kernelwright.tools.lower.emit.rows import (
    LANE_OPS,
    StashMismatch,
    _out_index,
    _reduce_lanes,
    _stash_store,
    reading_from,
    simd_clause,
    stash_of,
)
from kernelwright.tools.lower.index import Ix, linear, unravel
from kernelwright.tools.lower.ir import Reduction
from kernelwright.tools.lower.schedule import Group

ROW_CHOICES: dict[str, list[Any]] = {"lanes": [0, 8, 16], "simdlen": [0, 8, 16]}
ONE_PASS_CHOICES: dict[str, list[Any]] = {"passes": ["two", "one"], "block": [256, 1024, 4096]}
ROW_DEFAULTS: dict[str, Any] = {"lanes": 0, "simdlen": 0, "passes": "two", "block": 1024,
                                "stage": 1}


def one_pass_pair(grp: Group) -> tuple[str, Reduction, Reduction] | None:
    """``("online", max, sum)`` or ``("centred", sum, centred sum)`` when the group's two
    reductions can share one sweep; None otherwise."""
    if len(grp.main) != 2:
        return None
    a, b = grp.main
    for first, second in ((a, b), (b, a)):
        if getattr(second, "online", None) is first and first.op == "max" \
                and first.acc_ctype() in ("float", "double"):
            return "online", first, second  # type: ignore[return-value]
        if getattr(second, "centred", None) is first:
            return "centred", first, second  # type: ignore[return-value]
    return None


def row_space(grp: Group) -> dict[str, list[Any]]:
    space = {p: list(c) for p, c in ROW_CHOICES.items()}
    if one_pass_pair(grp) is not None:
        space.update({p: list(c) for p, c in ONE_PASS_CHOICES.items()})
    if row_source(grp) is not None:
        space.update({p: list(c) for p, c in STAGE_CHOICES.items()})
    width = column_rows(grp)
    if width:
        space["column"] = [c for c in COLUMN_CHOICES if c <= max(8, width)]
    return space


class RowPlan:
    """The schedule of one C++ row group, read from its parameters."""

    def __init__(self, params: dict[str, Any], full_team: bool) -> None:
        self.passes = str(params.get("passes", "two"))
        self.block = int(params.get("block", 1024))
        self.lanes = int(params.get("lanes", 0))
        n = int(params.get("simdlen", 0))
        self.simdlen = f" simdlen({n})" if n else ""
        self.full_team = full_team  # the single row runs on the OpenMP team
        self.column = int(params.get("column", 0))
        self.stage = bool(int(params.get("stage", 1)))  # cpp_stage

    def loops(self, k: KernelCtx, sizes: list[int], fn, simd: str | None,
              lo_hi: tuple[str, str] | None = None) -> None:
        """``fn(loop vars)`` for every element; ``simd`` the innermost loop's clause (None:
        scalar); ``lo_hi`` bounds the innermost loop. On the team, the outermost loop is the
        parallel one (with ``simd``'s reduction clause)."""
        if k.column:
            simd = None  # the lanes are the rows: the reduced dims are plain loops
        opened, rv = [], []
        par = self.full_team and simd is not None
        for j, s in enumerate(sizes):
            last = j == len(sizes) - 1
            name = k.fresh("r")
            if par and j == 0:
                # the leading dims collapsed: enough iterations to share out
                kind = " simd" if last else f" collapse({len(sizes) - 1})" if len(sizes) > 2 \
                    else ""
                k.emit(f"#pragma omp parallel for{kind}{simd}"
                       f"{self.simdlen if last else ''} schedule(static)")
            elif last and simd is not None and k.simd:
                k.emit(f"#pragma omp simd{simd}{self.simdlen}")
            if last and lo_hi is not None:
                cm = k.block(f"for ({k.idx_type} {name} = {lo_hi[0]}; {name} < {lo_hi[1]}; "
                             f"++{name})")
                cm.__enter__()
                rv.append(Ix.atom(name, (0, s - 1)))
            else:
                cm = k.loop(name, s)
                rv.append(cm.__enter__())
            opened.append(cm)
        with lanes(k):
            fn(rv)
        for cm in reversed(opened):
            cm.__exit__(None, None, None)


def cpp_rows_body(k: KernelCtx, grp: Group, names: dict[int, str], unit: str,
                  plan: RowPlan, stash: bool = True) -> int:
    dom: Reduction = grp.domain  # type: ignore[assignment]
    outer_shape = tuple(dom.src_shape[d] for d in dom.outer_dims)
    n_outer = math.prod(outer_shape)
    if n_outer != 1:
        plan.full_team = False
    if plan.column and column_rows(grp):
        k.column = plan.column
        outer = column_outer(k, unit, outer_shape, plan.column)
        n_outer = n_outer // outer_shape[-1] * -(-outer_shape[-1] // plan.column)
        stash = False
    else:
        outer = index_vars(k, Ix.atom(unit, (0, max(0, n_outer - 1))), outer_shape, "o")
    k.stash = stash_of(k, grp, names) if stash else None
    pair = one_pass_pair(grp) if plan.passes == "one" and not plan.full_team \
        and not k.column else None
    with staged(k, grp, outer, plan, plan.stage and stash):
        factor = None
        if pair is not None and pair[0] == "online":
            factor = _online(k, outer, pair[1], pair[2], plan)
        elif pair is not None:
            _centred(k, outer, pair[1], pair[2], plan)
        else:
            for r in grp.main:
                _reduce(k, r, outer, plan)
        if grp.epilogue:
            _hoist_row_invariants(k, grp, outer)
            if k.stash is None:
                plan.loops(k, dom.red_sizes, lambda rv: write_epilogue(
                    k, dom.src_shape, dom.full_index(outer, rv), grp.epilogue, names), "")
            else:
                _stash_epilogue(k, dom, outer, grp, names, plan, factor)
    with lanes(k):
        for r in grp.main:
            if r.id in names:
                store_node(k, r, names, _out_index(r, outer), k.bound[r.id][-1].var)
        for e in grp.outer:
            idx = unravel(linear(outer, outer_shape), e.shape)
            store_node(k, e, names, idx, e.load(k, idx))
    return n_outer


def _hoist_row_invariants(k: KernelCtx, grp: Group, outer: list[Ix]) -> None:
    """Compute the epilogue's operands of the row's keepdim shape (a norm's mean and rstd,
    log-softmax's log of the sum) once per row, before the loops: a scalar call left inside
    a simd loop (``kw_logf``) keeps g++ from vectorising it."""
    dom: Reduction = grp.domain  # type: ignore[assignment]
    keep = tuple(1 if i in dom.red_dims else s for i, s in enumerate(dom.src_shape))
    it = iter(outer)
    idx = [Ix.c(0) if i in dom.red_dims else next(it) for i in range(len(keep))]
    done: set[int] = set()
    for e in grp.epilogue:
        for d in e.deps:
            if (d.kind == "pointwise" and d.id not in done and d.id not in k.realized
                    and tuple(d.shape) == keep and len(keep) > 0):
                done.add(d.id)
                k.bind(d, d.key(idx), d.load(k, idx))


def _reduce(k: KernelCtx, r: Reduction, outer: list[Ix], plan: RowPlan) -> None:
    acc, pos = r.init(k)
    lanes_fit = not plan.full_team and not k.column  # column blocks: the rows are the lanes
    # arg-reductions have no omp simd form: lanes 0 means 8 lanes for them
    if pos is not None and lanes_fit and arg_lanes_fit(r, plan.lanes or 8):
        reduce_arg_lanes(k, r, outer, acc, pos, plan.lanes or 8)
    elif (plan.lanes > 1 and lanes_fit and pos is None and r.op in LANE_OPS
            and r.acc_ctype() == "float" and r.red_sizes and r.red_sizes[-1] >= plan.lanes):
        k.lanes = plan.lanes
        _reduce_lanes(k, r, outer, acc)
    else:
        def step(rv):
            idx = r.full_index(outer, rv)
            assert r.body is not None
            v = r.body(k, idx)
            _stash_store(k, r, idx, v)
            flat = linear([idx[d] for d in r.red_dims], tuple(r.red_sizes))
            r.combine(k, acc, pos, v, flat.render())

        plan.loops(k, r.red_sizes, step, simd_clause(r, acc, pos))
    k.bind(r, outer, r.finish(k, acc, pos))


def _blocks(k: KernelCtx, sizes: list[int], block: int, body) -> str:
    """Walk the reduced dims in blocks: the leading dims one index at a time, the last one
    in chunks of ``block``; ``body(lead vars, lo, hi, block id)`` emits one block. Returns
    the number of blocks as C text."""
    n = sizes[-1]
    nb = -(-n // block)
    lead, opened = [], []
    for s in sizes[:-1]:
        cm = k.loop(k.fresh("r"), s)
        lead.append(cm.__enter__())
        opened.append(cm)
    blk, lo, hi = k.fresh("blk"), k.fresh("lo"), k.fresh("hi")
    with k.block(f"for (int {blk} = 0; {blk} < {nb}; ++{blk})"):
        k.emit(f"const int {lo} = {blk} * {block};")
        k.emit(f"const int {hi} = {lo} + {block} < {n} ? {lo} + {block} : {n};")
        bid = linear(lead + [Ix.atom(blk, (0, nb - 1))], tuple(sizes[:-1]) + (nb,))
        body(lead, lo, hi, bid.render())
    for cm in reversed(opened):
        cm.__exit__(None, None, None)
    return str(math.prod(sizes[:-1]) * nb)


def _block_loop(k: KernelCtx, r: Reduction, outer: list[Ix], lead: list[Ix], lo: str, hi: str,
                acc: str, plan: RowPlan, stash: bool) -> None:
    n = r.red_sizes[-1]
    name = k.fresh("r")
    clause = simd_clause(r, acc, None)
    if clause is not None and k.simd:
        k.emit(f"#pragma omp simd{clause}{plan.simdlen}")
    with k.block(f"for ({k.idx_type} {name} = {lo}; {name} < {hi}; ++{name})"):
        idx = r.full_index(outer, lead + [Ix.atom(name, (0, n - 1))])
        assert r.body is not None
        v = r.body(k, idx)
        if stash:
            _stash_store(k, r, idx, v)
        r.combine(k, acc, None, v, "0")


def _online(k: KernelCtx, outer: list[Ix], rmax: Reduction, rsum: Reduction,
            plan: RowPlan) -> str | None:
    """Running max and rescaled exponential sum in one sweep; returns the per-block
    correction array when exponentials were stashed against a running max."""
    mt, st = rmax.acc_ctype(), rsum.acc_ctype()
    sizes = rmax.red_sizes
    nblocks = math.prod(sizes[:-1]) * -(-sizes[-1] // plan.block)
    m = k.var(mt, literal(-math.inf, rmax.acc_dtype))
    s = k.var(st, literal(0, rsum.acc_dtype))
    stashing = k.stash is not None and k.stash[0] is rsum and nblocks > 1
    bmx = k.fresh("bmx")
    if stashing:
        k.emit(f"{mt} {bmx}[{nblocks}];")
    k.bind(rmax, outer, m)  # loads of the max inside the sweep read the running max

    def block(lead, lo, hi, bid):
        bm = k.var(mt, literal(-math.inf, rmax.acc_dtype))
        _block_loop(k, rmax, outer, lead, lo, hi, bm, plan, False)
        with k.block(f"if ({bm} > {m})"):
            k.emit(f"{s} *= ({st}){k.call('exp', mt, f'({m} - {bm})')};")
            k.emit(f"{m} = {bm};")
        bs = k.var(st, literal(0, rsum.acc_dtype))
        _block_loop(k, rsum, outer, lead, lo, hi, bs, plan, True)
        k.emit(f"{s} += {bs};")
        if stashing:
            k.emit(f"{bmx}[{bid}] = {m};")

    _blocks(k, sizes, plan.block, block)
    k.bind(rsum, outer, rsum.finish(k, s, None))
    return bmx if stashing else None


def _centred(k: KernelCtx, outer: list[Ix], rs: Reduction, rq: Reduction,
             plan: RowPlan) -> None:
    """Sum and centred sum of squares in one sweep: each block's sum and sum of squares
    about its own mean, merged into the running ones (Chan, Golub and LeVeque)."""
    st, qt = rs.acc_ctype(), rq.acc_ctype()
    count = rs.red_numel
    tot = k.var(st, literal(0, rs.acc_dtype))
    mu, m2, cnt = k.var("double", "0.0"), k.var("double", "0.0"), k.var("double", "0.0")

    def block(lead, lo, hi, bid):
        bs = k.var(st, literal(0, rs.acc_dtype))
        _block_loop(k, rs, outer, lead, lo, hi, bs, plan, False)
        nb = k.let(f"(double)({hi} - {lo})", "double")
        # the block's sum scaled to the whole row: the mean the body divides it into is then
        # the block's own mean
        k.bind(rs, outer, k.let(f"(({rs.ctype})((double){bs} * {count}.0 / {nb}))",
                                rs.ctype))
        bq = k.var(qt, literal(0, rq.acc_dtype))
        _block_loop(k, rq, outer, lead, lo, hi, bq, plan, False)
        k.bound[rs.id].pop()
        bmean = k.let(f"((double){bs} / {nb})", "double")
        d = k.let(f"({bmean} - {mu})", "double")
        k.emit(f"{m2} += (double){bq} + {d} * {d} * {cnt} * {nb} / ({cnt} + {nb});")
        k.emit(f"{mu} += {d} * {nb} / ({cnt} + {nb});")
        k.emit(f"{cnt} += {nb};")
        k.emit(f"{tot} += {bs};")

    _blocks(k, rs.red_sizes, plan.block, block)
    k.bind(rs, outer, rs.finish(k, tot, None))
    k.bind(rq, outer, rq.finish(k, f"(({qt}){m2})", None))


def _stash_epilogue(k: KernelCtx, dom: Reduction, outer: list[Ix], grp: Group,
                    names: dict[int, str], plan: RowPlan, factor: str | None) -> None:
    """The epilogue reading the stashed elements back from its output (scaled by the block's
    correction ``exp(block max - row max)`` when ``factor`` names the block maxima)."""
    r, src, buf, e = k.stash
    loads: list[tuple[Ix, Ix]] = []
    plain = k.load_buffer
    want: list[Ix] = [Ix.c(0)]
    scale: list[str | None] = [None]

    def load_buffer(name, node, ix):
        v = plain(name, node, ix)
        if name != buf:
            return v
        loads.append((linear(ix, node.shape), want[0]))
        return v if scale[0] is None else k.let(f"({v} * {scale[0]})", node.ctype)

    def write(rv):
        idx = dom.full_index(outer, rv)
        want[0] = linear(idx, tuple(dom.src_shape))
        write_epilogue(k, dom.src_shape, idx, grp.epilogue, names)

    with reading_from(k, src.id, buf, load_buffer):
        if factor is None:
            plan.loops(k, dom.red_sizes, write, "")
        else:
            m = k.bound[r.online.id][-1].var  # type: ignore[attr-defined]
            ct = src.ctype

            def block(lead, lo, hi, bid):
                scale[0] = k.let(k.call("exp", ct, f"(({ct}){factor}[{bid}] - {m})"), ct)
                n = dom.red_sizes[-1]
                name = k.fresh("r")
                if k.simd:
                    k.emit(f"#pragma omp simd{plan.simdlen}")
                with k.block(f"for ({k.idx_type} {name} = {lo}; {name} < {hi}; ++{name})"):
                    write(lead + [Ix.atom(name, (0, n - 1))])

            _blocks(k, dom.red_sizes, plan.block, block)
    if any(got != at for got, at in loads):
        raise StashMismatch(e.name)
