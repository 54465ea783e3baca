"""Row groups: one row (outer index) per unit, or one work-group per row.

Every reduction of the group walks the row once (independent lanes, a group reduction, or
a plain loop, as the backend's layout says); the epilogue then walks it again writing
elementwise outputs from the row's registers. Softmax-like groups keep the summed elements
in their output on the way (``stash_of``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import torch

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dtypes import literal
from kernelwright.tools.lower.emit.common import index_vars, store_node, write_epilogue
from kernelwright.tools.lower.index import Ix, linear, unravel
from kernelwright.tools.lower.ir import Reduction
from kernelwright.tools.lower.schedule import Group


class StashMismatch(Exception):
    """The epilogue read a stashed element at another index: emit without the stash."""


def stash_of(k: KernelCtx, grp: Group, names: dict[int, str]):
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


@contextmanager
def reading_from(k: KernelCtx, node_id: int, buf: str, load_buffer) -> Iterator[None]:
    """For the block, loads of node ``node_id`` read ``buf`` through ``load_buffer`` (the
    softmax stash in the output, a C++ row's staged source); then as before."""
    plain = k.load_buffer
    k.realized[node_id] = buf
    k.load_buffer = load_buffer  # type: ignore[method-assign]
    try:
        yield
    finally:
        del k.realized[node_id]
        k.load_buffer = plain  # type: ignore[method-assign]


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
        write_epilogue(k, dom.src_shape, idx, grp.epilogue, names)

    with reading_from(k, src.id, buf, load_buffer):
        _over_row(k, dom, outer, lid, wg, write, "")
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
    outer = index_vars(k, Ix.atom(unit, (0, max(0, n_outer - 1))), outer_shape, "o")
    k.stash = stash_of(k, grp, names) if stash else None
    for r in grp.main:
        _reduce_phase(k, r, outer, lid, wg)
    if grp.epilogue:
        if k.stash is None:
            _over_row(k, dom, outer, lid, wg, lambda idx: write_epilogue(
                k, dom.src_shape, idx, grp.epilogue, names), "")
        else:
            _epilogue_from_stash(k, dom, outer, lid, wg, grp, names)
    stored = [r for r in grp.main if r.id in names]
    if stored:
        with k.block("if (l == 0)" if lid is not None else ""):
            for r in stored:
                store_node(k, r, names, _out_index(r, outer), k.bound[r.id][0].var)
    if grp.outer:
        def outer_out():
            oflat = linear(outer, outer_shape)
            for e in grp.outer:
                idx = unravel(oflat, e.shape)
                v = e.load(k, idx)
                store_node(k, e, names, idx, v)
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
            if simd is not None and j == len(sizes) - 1 and k.simd:
                k.emit(f"#pragma omp simd{simd}")
            cm = k.loop(name, s)
            rv.append(cm.__enter__())
            opened.append(cm)
        fn(dom.full_index(outer, rv))
        for cm in reversed(opened):
            cm.__exit__(None, None, None)
        return
    split = _group_split(dom, wg)
    opened, head = [], []
    for s in sizes[:split]:  # one plain loop per leading reduced dim: no division per element
        cm = k.loop(k.fresh("r"), s)
        head.append(cm.__enter__())
        opened.append(cm)
    n = math.prod(sizes[split:])

    def at(r: str) -> None:
        # left as expressions: where the dims lie side by side in memory, the index algebra
        # folds their divisions and remainders back into r
        fn(dom.full_index(outer, head + unravel(Ix.atom(r, (0, n - 1)), tuple(sizes[split:]))))

    # the loop's trip count is the same for every work-item (``r = j + lid``, then a
    # guarded tail): with ``r = lid; r < n`` the SYCL CPU device vectorises a divergent loop
    # whose loads are masked gathers, 5x slower on a row sum of 4096 floats. Both are written
    # with the work-group size, never a count derived from it, so an edit of the launch size
    # (the coder's KW_LOCAL) keeps them correct; the compiler folds them to constants.
    full = f"{n} / {wg} * {wg}"
    j, r = k.fresh("j"), k.fresh("r")
    with k.block(f"for ({k.idx_type} {j} = 0; {j} < {full}; {j} += {wg})"):
        k.emit(f"const {k.idx_type} {r} = {j} + {lid};")
        at(r)
    with k.block(f"if ({full} + {lid} < {n})"):
        k.emit(f"const {k.idx_type} {r} = {full} + {lid};")
        at(r)
    for cm in reversed(opened):
        cm.__exit__(None, None, None)


def _group_split(dom: Reduction, wg: int) -> int:
    """Where a work-group's strided walk over a row begins: at the last reduced dim, widened
    to the left until it has at least ``wg`` elements (over consecutive dims the index
    algebra folds the walk into one offset); the reduced dims before it get plain loops. Batch
    norm's (N, H, W) over NCHW walks N in a loop and H x W strided: 1.9x faster on the SYCL
    CPU device than one strided walk over all three, whose every element paid two divisions.
    A group norm's (channels of the group, H x W) walks each channel in a loop of its own, so
    a per-channel operand is one load per channel, not a division per element."""
    dims, sizes = list(dom.red_dims), list(dom.red_sizes)
    j = len(dims) - 1
    while j > 0 and math.prod(sizes[j:]) < wg:  # past a gap too: no idle lanes
        j -= 1
    return max(j, 0)


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
    reduce = k.target.group_reduce
    ct = r.acc_ctype()
    op = {"sum": "plus", "prod": "multiplies", "max": "maximum", "min": "minimum",
          "any": "logical_or", "all": "logical_and", "argmax": "maximum",
          "argmin": "minimum"}[r.op]
    total = k.let(reduce(acc, ct, op, k.subgroup), ct)
    if pos is None:
        return total, None
    cand = k.let(f"({acc} == {total} ? {pos} : 9223372036854775807LL)", "long long")
    best = k.let(reduce(cand, "long long", "minimum", k.subgroup), "long long")
    return total, best
