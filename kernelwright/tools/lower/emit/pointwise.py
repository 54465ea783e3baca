"""Elementwise kernels (a unit is one or ``ipw`` elements) and scans (a unit is a line)."""

from __future__ import annotations

import math

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dtypes import literal
from kernelwright.tools.lower.emit.common import finish_element, index_vars
from kernelwright.tools.lower.index import Ix, unravel
from kernelwright.tools.lower.ir import Node, Scan
from kernelwright.tools.lower.schedule import Group


def pointwise_body(k: KernelCtx, grp: Group, names: dict[int, str], u: str,
                   ipw: int) -> int:
    node = grp.main[0]
    n = node.numel
    units = -(-n // ipw)
    if ipw == 1:
        idx = index_vars(k, Ix.atom(u, (0, n - 1)), node.shape, "i")
        write_element(k, node, names, idx)
        return units
    with k.block(f"for (int e = 0; e < {ipw}; ++e)"):
        k.emit(f"const {k.idx_type} f = {u} * {ipw} + e;")
        with k.block(f"if (f < {n})"):
            idx = index_vars(k, Ix.atom("f", (0, n - 1)), node.shape, "i")
            write_element(k, node, names, idx)
    return units


def row_split(shape: tuple[int, ...], wg: int) -> tuple[int, int] | None:
    """``(rows, cols)``: the smallest trailing block of ``shape`` (leading dim excluded) whose
    size is a multiple of ``wg``, so no work-group straddles two rows; None when none is."""
    if not shape or math.prod(shape) == 0:
        return None
    cols = 1
    for size in reversed(shape[1:]):
        cols *= size
        if cols % wg == 0:
            return math.prod(shape) // cols, cols
    return None


PADDING = 1 / 8  # the share of idle lanes a padded row split may add


def padded_row_split(shape: tuple[int, ...], wg: int) -> tuple[int, int] | None:
    """``(rows, cols)`` as ``row_split``, for a last dim that is not a multiple of ``wg``:
    rows of the last dim alone (a lane's column is then its last index, with no division),
    when padding it to whole work-groups idles at most ``PADDING`` of the lanes; else None.
    A block of several dims gains nothing: its lanes still divide, and the idle lanes cost
    (an 11 x 11 average pool over (64, 5, 5) blocks: 1.5 -> 2.0 ms)."""
    if len(shape) < 2 or math.prod(shape) == 0:
        return None
    cols = shape[-1]
    if -(-cols // wg) * wg > cols * (1 + PADDING):
        return None
    return math.prod(shape) // cols, cols


def pointwise_rows_body(k: KernelCtx, grp: Group, names: dict[int, str], group: str,
                        lane: str, wg: int, cols: int) -> int:
    """Elementwise with work-group ``group`` covering ``wg`` neighbouring elements of one row
    of ``cols`` (``lane`` its work-item): the row's coordinates (a channel, say) are the same
    for the whole group, so a per-channel operand is one load, not one per lane, and the
    offsets along the row fold back into one sum (no division per element).

    A row that is not a multiple of ``wg`` is padded to whole work-groups, its last lanes
    idle: the lanes still run along the row, so their loads stay contiguous. Over the flat
    index a lane's row and column are a division each, and its reads (a pooling window's,
    clamped at the border) gathers: a 1-D max pool over rows of 243 took 10.5 ms flat and
    2.9 ms padded on the SYCL CPU device."""
    node = grp.main[0]
    rows, blocks = node.numel // cols, -(-cols // wg)
    row, block = ((group, "0") if blocks == 1 else
                  (k.let(f"{group} / {blocks}", "int"), k.let(f"{group} % {blocks}", "int")))
    if blocks * wg == cols:
        col = Ix.atom(block, (0, blocks - 1)) * wg + Ix.atom(lane, (0, wg - 1))
        write_element(k, node, names, unravel(Ix.atom(row, (0, rows - 1)) * cols + col,
                                              tuple(node.shape)))
        return node.numel
    col = lane if blocks == 1 else k.let(f"{block} * {wg} + {lane}", "int")
    with k.block(f"if ({col} < {cols})"):
        flat = Ix.atom(row, (0, rows - 1)) * cols + Ix.atom(col, (0, cols - 1))
        write_element(k, node, names, unravel(flat, tuple(node.shape)))
    return rows * blocks * wg


def pointwise_runs_body(k: KernelCtx, grp: Group, names: dict[int, str], group: str,
                        lane: str, wg: int, ipw: int) -> int:
    """Elementwise over the flat index, work-group ``group`` covering ``ipw`` runs of ``wg``
    neighbouring elements (the last group's tail guarded), so each run's loads are contiguous
    across the lanes. On the SYCL CPU device a sigmoid over 2048 x 1536 floats took 1.5 ms
    with ipw = 8, 2.5 with one element per work-item and 2.8-3.4 with a work-item's elements
    side by side (``u * ipw + e``: gathers); a plain scale was faster with one element."""
    node = grp.main[0]
    n = node.numel
    groups = -(-n // (wg * ipw))
    with k.block(f"for (int e = 0; e < {ipw}; ++e)"):
        k.emit(f"const {k.idx_type} f = ({group} * {ipw} + e) * {wg} + {lane};")
        with k.block(f"if (f < {n})" if groups * wg * ipw != n else ""):
            # the multi-index as expressions of f, not named variables: an operand read at
            # the element's own (contiguous) offset then folds back to f, a vector load
            # across the lanes, where named indices re-linearised made it a gather (11 x 11
            # average pooling to (16, 64, 5, 5): 2.5 -> 1.0 ms; a transposed convolution
            # with its GELU epilogue: 23.6 -> 18.7 ms)
            write_element(k, node, names, unravel(Ix.atom("f", (0, n - 1)), node.shape))
    return groups * wg


def write_element(k: KernelCtx, node: Node, names: dict[int, str], idx: list[Ix]) -> None:
    k.owned.discard(node.id)
    v = node.compute(k, idx)
    k.store(names[node.id], node, idx, v)


def scan_body(k: KernelCtx, grp: Group, names: dict[int, str], unit: str) -> int:
    s: Scan = grp.main[0]  # type: ignore[assignment]
    shape = tuple(s.shape)
    lines = tuple(x for d, x in enumerate(shape) if d != s.dim)
    n = math.prod(lines)
    outer = index_vars(k, Ix.atom(unit, (0, max(0, n - 1))), lines, "o")
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
        finish_element(k, grp, names, idx, cur)
    return n
