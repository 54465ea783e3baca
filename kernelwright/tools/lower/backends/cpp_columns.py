"""C++ column blocks: row groups whose rows lie side by side in memory (the domain's last dim
is not reduced, as in a softmax over the channels of NCHW) walk ``column`` neighbouring rows at
once. Every reduced loop's body becomes a contiguous ``omp simd`` loop over the block's rows
(``cv``; ``cw`` rows in a tail block), and every per-row value an array of one element per row
(``KernelCtx.column``, ``KernelCtx.let``)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.emit.common import index_vars
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.ir import Reduction
from kernelwright.tools.lower.schedule import Group

COLUMN_CHOICES = [0, 8, 16, 32]


def column_rows(grp: Group) -> int:
    """How many rows lie side by side along the domain's last dim (0: that dim is reduced, or
    the group has a single row, or fewer than 8 rows: column blocks do not apply)."""
    dom: Reduction = grp.domain  # type: ignore[assignment]
    last = len(dom.src_shape) - 1
    if last < 0 or last in dom.red_dims or not dom.red_dims:
        return 0
    width = dom.src_shape[last]
    return width if width >= 8 else 0


def default_column(grp: Group) -> int:
    width = column_rows(grp)
    return 16 if width >= 16 else 8 if width else 0


@contextmanager
def lanes(k: KernelCtx) -> Iterator[None]:
    """In a column block, a simd loop over its rows (``cv``); otherwise nothing."""
    if not k.column or k.in_lanes:
        yield
        return
    k.emit("#pragma omp simd")
    with k.block("for (int cv = 0; cv < cw; ++cv)"):
        k.in_lanes = True
        try:
            yield
        finally:
            k.in_lanes = False


def column_outer(k: KernelCtx, unit: str, outer_shape: tuple[int, ...], width: int) -> list[Ix]:
    """The outer index of a column block's row ``cv``: the block's leading indices, then
    ``cb + cv`` along the last dim (``cw`` rows in this block)."""
    nblk = -(-outer_shape[-1] // width)
    k.emit(f"const int cb = ({unit} % {nblk}) * {width};")
    k.emit(f"const int cw = cb + {width} <= {outer_shape[-1]} ? {width} : "
           f"{outer_shape[-1]} - cb;")
    lead_shape = outer_shape[:-1]
    lead = index_vars(k, Ix.atom(f"({unit} / {nblk})", (0, max(0, math.prod(lead_shape) - 1))),
                      lead_shape, "o")
    return lead + [Ix.atom("(cb + cv)", (0, outer_shape[-1] - 1))]
