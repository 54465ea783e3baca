"""Split reductions with few long rows into partial rows and a short final reduction.

A backend that runs one work-group per row (SYCL, CUDA) gives a full reduction (a norm over
the whole tensor, a loss) one work-group: one core of a CPU device, one SM of a GPU. Before
scheduling, such a reduction ``r`` becomes two: ``part``, which reduces ``P`` chunks of each
row into ``P`` partial results (``P`` rows of work-groups in parallel; a float sum's
chunks of at most ``FLOAT_RUN`` floats accumulate in float, their results in ``r``'s
accumulator type), and ``r`` itself, which now reduces those partials. ``r`` keeps
its node, shape and dtype, so every reader of it is unchanged; a pointwise node over the
original row that read ``r`` (``x / norm``) becomes a kernel of its own, parallel like any
pointwise kernel, instead of the row's epilogue.

The chunks come from the leading reduced dims: whole dims while their product is below the
target, then a divisor of the next one. Nothing is split when the row has enough rows
already, when it is short, or when no divisor gives chunks of at least ``MIN_CHUNK``.
"""

from __future__ import annotations

import math

import torch

from kernelwright.tools.lower.graph import LoweredGraph
from kernelwright.tools.lower.index import unravel
from kernelwright.tools.lower.ir import Reduction
from kernelwright.tools.lower.ops_reduce import FLOAT_RUN, acc_dtype_for

TARGET_ROWS = 64  # work-groups wanted across the partial rows
MIN_CHUNK = 4096  # elements per partial row: below this a second launch is not worth it
MIN_NARROW = 1024  # the shortest chunk worth its own work-group to sum in float
SPLIT_OPS = ("sum", "prod", "max", "min", "any", "all")


def split_wide_reductions(g: LoweredGraph) -> list[str]:
    """Split every eligible reduction of ``g`` in place; returns one line per split."""
    linked = {id(n) for r in g.nodes if isinstance(r, Reduction)
              for n in (r.direct, r.online, r.centred) if n is not None}
    lines: list[str] = []
    for r in list(g.nodes):
        if not isinstance(r, Reduction) or id(r) in linked or not _eligible(r):
            continue
        cut = _choose_cut(r)
        if cut is None:
            continue
        n, parts = r.red_numel, _parts(cut, r)
        g.nodes.insert(g.nodes.index(r), _split(r, *cut))
        lines.append(f"{r.name or 'reduction'}: rows of {n} split into {parts} partial rows "
                     "each, then a final reduction (few long rows)")
    return lines


def _rows(r: Reduction) -> int:
    return math.prod(r.src_shape[d] for d in r.outer_dims)


def _eligible(r: Reduction) -> bool:
    return (r.op in SPLIT_OPS and r.body is not None and r.direct is None
            and r.online is None and r.centred is None and _rows(r) < TARGET_ROWS
            and r.red_numel >= 2 * MIN_CHUNK)


def _choose_cut(r: Reduction) -> tuple[int, int] | None:
    """``(j, p)``: reduced dims before position ``j`` become whole partial-row dims, and
    reduced dim ``j`` splits into ``p`` partial rows of ``size / p``; None: no good cut.

    The fewest partial rows that give ``TARGET_ROWS`` rows in all; where no cut gives that
    many with long enough chunks, the most partial rows that it can give. A float sum whose
    row accumulates in double (``acc_dtype_for``) prefers chunks of at most ``FLOAT_RUN``:
    each chunk then sums in float, at twice the vector width, and the partials in double,
    which is no less exact than one double sum.
    """
    n = r.red_numel
    want = -(-TARGET_ROWS // _rows(r))
    cuts = sorted((parts, j, p) for j, p, parts in _cuts(r.red_sizes))
    narrow = [c for c in cuts if c[0] >= want and MIN_NARROW <= n // c[0] <= FLOAT_RUN
              and _part_acc(r, n // c[0]) != r.acc_dtype]
    wide = [c for c in cuts if n // c[0] >= MIN_CHUNK]
    enough = [c for c in wide if c[0] >= want]
    best = narrow[0] if narrow else enough[0] if enough else wide[-1] if wide else None
    return None if best is None else (best[1], best[2])


def _cuts(sizes: list[int]):
    """Every ``(j, p, parts)``: whole reduced dims before ``j``, a divisor ``p`` of dim ``j``."""
    pre = 1
    for j, s in enumerate(sizes):
        for p in _divisors(s):
            yield j, p, pre * p
        pre *= s


def _divisors(s: int) -> list[int]:
    """The divisors of ``s`` past 1 (the cut with p = 1 is the cut before, whole)."""
    small = [d for d in range(2, math.isqrt(s) + 1) if s % d == 0]
    return sorted(set(small + [s // d for d in small] + [s]) - {1})


def _part_acc(r: Reduction, chunk: int) -> torch.dtype:
    return acc_dtype_for(r.op, r.dtype, chunk) if r.op in ("sum", "prod") else r.acc_dtype


def _parts(cut: tuple[int, int], r: Reduction) -> int:
    j, p = cut
    return math.prod(r.red_sizes[:j]) * p


def _split(r: Reduction, j: int, p: int) -> Reduction:
    """Make ``r`` reduce the partials of a new node over the chunks of ``cut``; returns
    that new node."""
    src, red = tuple(r.src_shape), tuple(r.red_dims)
    split_dim, q = red[j], src[red[j]] // p
    whole = set(red[:j])
    # the partial node's source: each original dim, with the split dim as (p, q); when every
    # dim after it is reduced, q and those dims are one flat dim (one long loop per chunk)
    tail = (q,) + src[split_dim + 1:]
    flat = all(d in red for d in range(split_dim + 1, len(src)))
    src1: list[int] = []
    red1: list[int] = []
    for d, s in enumerate(src):
        if d == split_dim:
            src1 += [p, math.prod(tail) if flat else q]
            red1.append(len(src1) - 1)
            if flat:
                break
        else:
            src1.append(s)
            if d in red and d not in whole:
                red1.append(len(src1) - 1)
    body, at = r.body, split_dim

    def part_body(k, idx1):
        rest = unravel(idx1[at + 1], tail) if flat else [idx1[at + 1]] + idx1[at + 2:]
        return body(k, idx1[:at] + [idx1[at] * q + rest[0]] + rest[1:])

    chunk = r.red_numel // _parts((j, p), r)
    part = Reduction(tuple(s for i, s in enumerate(src1) if i not in red1), r.acc_dtype,
                     list(r.deps), name=f"{r.name}_part", op=r.op, src_shape=tuple(src1),
                     red_dims=tuple(red1), keepdim=False, body=part_body,
                     acc_dtype=_part_acc(r, chunk), cost=chunk)
    # r now reduces ``part`` over the chunk dims (the whole dims and p); the dims reduced
    # inside ``part`` stay as size-1 reduced dims, so r's shape (keepdim or not) is unchanged
    src2 = tuple(p if d == split_dim else (1 if d in red and d > split_dim else s)
                 for d, s in enumerate(src))
    keep = [d for d in range(len(src)) if d not in red or d in whole or d == split_dim]

    def final_body(k, idx2):
        return part.load(k, [idx2[d] for d in keep])

    r.src_shape, r.body, r.deps, r.cost = src2, final_body, [part], max(1, math.prod(
        src2[d] for d in red))
    return part

