"""Attention (``ir.Attention``): one query row per work-item, softmax computed online.

On SYCL and CUDA a unit is a work-group of query rows of one batch entry, one row per
work-item. A row walks the keys once: for each key the score ``scale * q . k``, then the running
maximum ``m``, the running denominator ``l`` and the output row ``acc`` rescaled by
``exp(m_old - m_new)`` (the one-pass softmax of flash attention), so no score leaves the
registers. SYCL and CUDA use this body; the C++ backend tiles query rows and keys
(``backends/cpp_attention.py``) on the same set-up.
"""

from __future__ import annotations

import math

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dtypes import compute_type, literal
from kernelwright.tools.lower.emit.common import finish_element, index_vars
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.ir import Attention
from kernelwright.tools.lower.schedule import Group


def attention_units(k: KernelCtx, a: Attention, unit: str, rows: int,
                    lane: str | None = None) -> tuple[list[Ix], int]:
    """Declare the unit's batch index and ``i0``, its first query row (``rows`` per unit);
    with ``lane`` the unit is a work-group of ``rows`` work-items and ``i0`` the lane's own
    row, so the batch index is uniform across the group. Returns the batch index and the
    number of units."""
    nb = math.prod(a.batch) if a.batch else 1
    blocks = -(-a.lq // rows)
    k.emit(f"const int bt = {unit} / {blocks};")
    k.emit(f"const int i0 = {unit} % {blocks} * {rows}" + (f" + {lane};" if lane else ";"))
    batch = index_vars(k, Ix.atom("bt", (0, nb - 1)), tuple(a.batch), "b") if a.batch else []
    return batch, nb * blocks


def key_end(a: Attention, last_row: str) -> str:
    """One past the last key a row up to ``last_row`` attends to."""
    return f"kw_min({last_row} + 1, {a.skv})" if a.causal else str(a.skv)


UNROLL = 128  # query + value widths up to this: registers, not arrays indexed by loops


def attention_body(k: KernelCtx, grp: Group, names: dict[int, str], unit: str,
                   lane: str | None = None, rows: int = 1) -> int:
    """One query row per work-item; with ``lane``, a unit is a work-group of ``rows`` rows
    of one batch entry (the device vectorises across the group: its key and value loads are
    then one address for every lane)."""
    a: Attention = grp.main[0]  # type: ignore[assignment]
    batch, units = attention_units(k, a, unit, rows, lane)
    with k.block(f"if (i0 < {a.lq})"):
        _row(k, grp, names, a, batch)
    return units


def _row(k: KernelCtx, grp: Group, names: dict[int, str], a: Attention,
         batch: list[Ix]) -> None:
    assert a.qload is not None and a.kload is not None and a.vload is not None
    ct = compute_type(a.dtype)
    zero = literal(0, a.dtype)
    row = Ix.atom("i0", (0, a.lq - 1))
    m = k.var(ct, f"-({ct})KW_INF", "m")
    den = k.var(ct, zero, "l")
    # a device compiler vectorises across work-items: an array indexed by a loop variable
    # becomes a gather per lane, so narrow rows live in named registers instead
    unrolled = a.d + a.dv <= UNROLL
    if unrolled:
        qrow = [a.qload(k, batch + [row, Ix.c(d)]) for d in range(a.d)]
        acc = [k.var(ct, zero, "acc") for _ in range(a.dv)]
    else:
        qname, aname = k.fresh("qrow"), k.fresh("acc")
        k.emit(f"{ct} {qname}[{a.d}];")
        k.emit(f"{ct} {aname}[{a.dv}];")
        with k.loop("e", a.dv) as e:
            k.emit(f"{aname}[{e.render()}] = {zero};")
        with k.loop("d", a.d) as d:
            k.emit(f"{qname}[{d.render()}] = {a.qload(k, batch + [row, d])};")
    with k.block(f"for (int j = 0; j < {key_end(a, 'i0')}; ++j)"):
        key = Ix.atom("j", (0, a.skv - 1))
        s = k.var(ct, zero, "s")
        if unrolled:
            for d in range(a.d):
                k.emit(f"{s} += {qrow[d]} * {a.kload(k, batch + [key, Ix.c(d)])};")
        else:
            with k.loop("d", a.d) as d:
                k.emit(f"{s} += {qname}[{d.render()}] * {a.kload(k, batch + [key, d])};")
        score = k.let(f"{s} * {literal(a.scale, a.dtype)}", ct)
        top = k.let(f"kw_max({m}, {score})", ct)
        corr = k.let(k.call("exp", ct, f"{m} - {top}"), ct)
        p = k.let(k.call("exp", ct, f"{score} - {top}"), ct)
        k.emit(f"{den} = {den} * {corr} + {p};")
        if unrolled:
            for e in range(a.dv):
                k.emit(f"{acc[e]} = {acc[e]} * {corr} + {p} * "
                       f"{a.vload(k, batch + [key, Ix.c(e)])};")
        else:
            with k.loop("e", a.dv) as e:
                at = f"{aname}[{e.render()}]"
                k.emit(f"{at} = {at} * {corr} + {p} * {a.vload(k, batch + [key, e])};")
        k.emit(f"{m} = {top};")
    inv = k.let(f"{literal(1, a.dtype)} / {den}", ct)
    if unrolled:
        for e in range(a.dv):
            out = k.let(f"{acc[e]} * {inv}", ct)
            finish_element(k, grp, names, batch + [row, Ix.c(e)], out)
    else:
        with k.loop("e", a.dv) as e:
            out = k.let(f"{aname}[{e.render()}] * {inv}", ct)
            finish_element(k, grp, names, batch + [row, e], out)
