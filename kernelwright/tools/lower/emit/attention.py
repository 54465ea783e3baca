"""Attention (``ir.Attention``): one query row per unit, softmax computed online.

A unit walks the keys once: for each key the score ``scale * q . k``, then the running
maximum ``m``, the running denominator ``l`` and the output row ``acc`` rescaled by
``exp(m_old - m_new)`` (the one-pass softmax of flash attention), so no score leaves the
unit's registers. SYCL and CUDA use this body; the C++ backend tiles query rows and keys
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


def attention_units(k: KernelCtx, a: Attention, unit: str, rows: int) -> tuple[list[Ix], int]:
    """Declare the unit's batch index and ``i0``, its first query row (``rows`` per unit).
    Returns the batch index and the number of units."""
    nb = math.prod(a.batch) if a.batch else 1
    blocks = -(-a.lq // rows)
    k.emit(f"const int bt = {unit} / {blocks};")
    k.emit(f"const int i0 = {unit} % {blocks} * {rows};")
    batch = index_vars(k, Ix.atom("bt", (0, nb - 1)), tuple(a.batch), "b") if a.batch else []
    return batch, nb * blocks


def key_end(a: Attention, last_row: str) -> str:
    """One past the last key a row up to ``last_row`` attends to."""
    return f"kw_min({last_row} + 1, {a.skv})" if a.causal else str(a.skv)


def attention_body(k: KernelCtx, grp: Group, names: dict[int, str], unit: str) -> int:
    a: Attention = grp.main[0]  # type: ignore[assignment]
    assert a.qload is not None and a.kload is not None and a.vload is not None
    batch, units = attention_units(k, a, unit, 1)
    ct = compute_type(a.dtype)
    zero = literal(0, a.dtype)
    row = Ix.atom("i0", (0, a.lq - 1))
    m = k.var(ct, f"-({ct})KW_INF", "m")
    den = k.var(ct, zero, "l")
    acc = k.fresh("acc")
    k.emit(f"{ct} {acc}[{a.dv}];")
    with k.loop("e", a.dv) as e:
        k.emit(f"{acc}[{e.render()}] = {zero};")
    with k.block(f"for (int j = 0; j < {key_end(a, 'i0')}; ++j)"):
        key = Ix.atom("j", (0, a.skv - 1))
        s = k.var(ct, zero, "s")
        with k.loop("d", a.d) as d:
            k.emit(f"{s} += {a.qload(k, batch + [row, d])} * {a.kload(k, batch + [key, d])};")
        score = k.let(f"{s} * {literal(a.scale, a.dtype)}", ct)
        top = k.let(f"kw_max({m}, {score})", ct)
        corr = k.let(k.call("exp", ct, f"{m} - {top}"), ct)
        p = k.let(k.call("exp", ct, f"{score} - {top}"), ct)
        k.emit(f"{den} = {den} * {corr} + {p};")
        with k.loop("e", a.dv) as e:
            at = f"{acc}[{e.render()}]"
            k.emit(f"{at} = {at} * {corr} + {p} * {a.vload(k, batch + [key, e])};")
        k.emit(f"{m} = {top};")
    inv = k.let(f"{literal(1, a.dtype)} / {den}", ct)
    with k.loop("e", a.dv) as e:
        out = k.let(f"{acc}[{e.render()}] * {inv}", ct)
        finish_element(k, grp, names, batch + [row, e], out)
    return units
