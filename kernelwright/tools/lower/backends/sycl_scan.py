"""SYCL scans along a contiguous dim as sub-group tiles.

The generic scan runs one line per work-item; on the SYCL CPU device neighbouring work-items
share a vector, so with the scanned dim last every load and store of the line loop became a
gather or scatter, one line length apart. Here one sub-group of ``SUB_GROUP`` lanes walks one
line instead, a tile of neighbouring elements at a time: the tile is one vector load, scanned
in registers (``inclusive_scan_over_group``), offset by the carry of the tiles before it and
stored as one vector; the carry then adds the tile's last prefix. A float line carries in
double, as the generic scan (and torch's CPU cumsum) do; inside a tile the float prefix adds
at most ``SUB_GROUP`` terms.

Measured on the CPU device (cumsum of 128 x 32768 floats, medians in ms of three rounds with
other work on both cores, timed in-process): line per work-item 36-58,
sub-group tiles 7-17, eager 20-24.
"""

from __future__ import annotations

import math

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dtypes import literal
from kernelwright.tools.lower.emit.common import finish_element, index_vars
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.ir import Scan
from kernelwright.tools.lower.schedule import Group

MIN_LINE = 64  # shorter lines: the generic scan (a tile loop would mostly be its tail)


def tiles_apply(grp: Group) -> bool:
    """Whether the group is a scan along its last dim with lines long enough for tiles."""
    s = grp.main[0]
    return (isinstance(s, Scan) and s.op in ("sum", "prod") and s.dim == len(s.shape) - 1
            and s.shape[-1] >= MIN_LINE)


def scan_tiles_body(k: KernelCtx, grp: Group, names: dict[int, str], lanes: int) -> int:
    """One line per sub-group (``u`` its line, ``l`` its lane); the number of lines."""
    s: Scan = grp.main[0]  # type: ignore[assignment]
    shape = tuple(s.shape)
    length = shape[-1]
    n = math.prod(shape[:-1])
    outer = index_vars(k, Ix.atom("u", (0, max(0, n - 1))), shape[:-1], "o")
    plus = s.op == "sum"
    acc_t = "double" if s.ctype == "float" else s.ctype
    identity = literal(0 if plus else 1, s.dtype)
    carry = k.var(acc_t, literal(0 if plus else 1, s.dtype))
    ragged = length % lanes != 0
    with k.block(f"for (int jb = 0; jb < {length}; jb += {lanes})"):
        k.emit("const int jr = jb + l;")
        j = k.let(f"kw_min(jr, {length - 1})" if ragged else "jr", "int")
        idx = [*outer, Ix.atom(j, (0, length - 1))]
        assert s.body is not None
        v = s.body(k, idx)
        if ragged:
            v = k.let(f"(jr < {length} ? ({s.ctype}){v} : {identity})", s.ctype)
        op = "plus" if plus else "multiplies"
        tile = k.let(f"sycl::inclusive_scan_over_group(kw_sg, ({s.ctype}){v}, "
                     f"sycl::{op}<{s.ctype}>())", s.ctype)
        both = f"{carry} {'+' if plus else '*'} ({acc_t}){tile}"
        cur = k.let(f"({s.ctype})({both})" if acc_t != s.ctype else f"({both})", s.ctype)
        with k.block(f"if (jr < {length})" if ragged else ""):
            finish_element(k, grp, names, idx, cur)
        last = f"sycl::group_broadcast(kw_sg, {tile}, {lanes - 1})"
        k.emit(f"{carry} {'+' if plus else '*'}= ({acc_t}){last};")
    return n
