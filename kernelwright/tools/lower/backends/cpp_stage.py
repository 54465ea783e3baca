"""A C++ row's costly source computed once per row into a local array, then read back.

A norm's statistics and its epilogue all read the row's source: a group norm after a GEMM,
bias, Hardtanh and Mish computes Mish three times per element when the source is fused into
each sweep (the mean's sum, the centred sum of squares, the normalised store). When every
reduction of a row group sums over one pointwise node that costs at least ``MIN_COST`` (one
transcendental call or more, counted over its fused chain) and the row fits ``LIMIT_BYTES``,
the row is first computed into ``stg[row]`` (a simd loop along the row), and every later load
of that node in the row reads the array. Rows of a few elements, as in a group norm of two
channels per group, gain most: the source was scalar code run three times.

Schedule parameter ``stage`` (1 by default, 0 to fuse the source into each sweep as before).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import torch

from kernelwright.tools.lower.emit.rows import StashMismatch, reading_from
from kernelwright.tools.lower.index import linear

if TYPE_CHECKING:
    from collections.abc import Iterator

    from kernelwright.tools.lower.codegen import KernelCtx
    from kernelwright.tools.lower.index import Ix
    from kernelwright.tools.lower.ir import Node, Reduction
    from kernelwright.tools.lower.schedule import Group

MIN_COST = 4  # an exp-based activation; a bias add alone is cheaper to fuse than to stage
LIMIT_BYTES = 64 << 10  # the array lives on the thread's stack and in its L2
STAGE_CHOICES: dict[str, list[Any]] = {"stage": [1, 0]}


def row_source(grp: Group) -> Node | None:
    """The one pointwise node every reduction of the group sums over, of the row's shape and
    a float dtype, when its row fits ``LIMIT_BYTES``; None otherwise."""
    dom: Reduction = grp.domain  # type: ignore[assignment]
    firsts = [r.deps[0] if r.deps else None for r in grp.main]
    if not firsts or any(f is None or f is not firsts[0] for f in firsts):
        return None
    src = firsts[0]
    assert src is not None
    same_rows = all(tuple(r.src_shape) == tuple(dom.src_shape)
                    and tuple(r.red_dims) == tuple(dom.red_dims) for r in grp.main)
    if (not same_rows or src.kind != "pointwise" or tuple(src.shape) != tuple(dom.src_shape)
            or src.dtype not in (torch.float32, torch.float64)):
        return None
    itemsize = torch.empty((), dtype=src.dtype).element_size()
    return src if dom.red_numel * itemsize <= LIMIT_BYTES else None


def fused_cost(k: KernelCtx, node: Node) -> int:
    """Arithmetic per element of ``node`` with the pointwise chain fused into it."""
    seen: set[int] = set()

    def walk(n: Node) -> int:
        if n.id in seen or n.id in k.realized or n.kind != "pointwise":
            return 0
        seen.add(n.id)
        return n.cost + sum(walk(d) for d in n.deps)

    return walk(node)


@contextmanager
def staged(k: KernelCtx, grp: Group, outer: list[Ix], plan: Any,
           enabled: bool) -> Iterator[None]:
    """Within the block, loads of the row's source read ``stg`` (filled on entry) when the
    source is worth it; otherwise nothing changes. Raises ``StashMismatch`` when a load reads
    the source outside its own row (the caller emits again without)."""
    src = row_source(grp) if enabled and not k.column and not plan.full_team else None
    if src is None or fused_cost(k, src) < MIN_COST or k.stash is not None:
        yield
        return
    dom: Reduction = grp.domain  # type: ignore[assignment]
    red_sizes = tuple(dom.red_sizes)
    buf = k.fresh("stg")
    k.emit(f"{src.ctype} {buf}[{dom.red_numel}];")

    def local(idx: list[Ix]) -> str:
        return linear([idx[d] for d in dom.red_dims], red_sizes).render()

    def put(rv: list[Ix]) -> None:
        idx = dom.full_index(outer, rv)
        k.emit(f"{buf}[{local(idx)}] = {src.load(k, idx)};")

    plan.loops(k, list(red_sizes), put, "")
    plain = k.load_buffer
    elsewhere: list[str] = []

    def load_buffer(name: str, node: Node, idx: list[Ix]) -> str:
        if name != buf:
            return plain(name, node, idx)
        if [idx[d] for d in dom.outer_dims] != list(outer):
            elsewhere.append(node.name)
        return k.let(f"{buf}[{local(idx)}]", node.ctype)

    with reading_from(k, src.id, buf, load_buffer):
        yield
    if elsewhere:
        raise StashMismatch(elsewhere[0])
