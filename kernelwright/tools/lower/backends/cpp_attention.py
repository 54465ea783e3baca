"""Attention on the C++ backend: ``br`` query rows per unit, keys ``bc`` at a time.

A unit packs its query rows (scaled) into a local tile once; per block of keys it packs the
keys transposed and the values as rows, so the score tile ``S = Q K^T`` and the update
``acc += P V`` are contiguous ``omp simd`` loops over keys and over value columns, and every
key and value element loaded is used by ``br`` rows. The softmax is online across key blocks
(a running maximum and denominator per row, ``acc`` rescaled when the maximum grows), so
scores never reach memory. Operands are read through their IR bodies while packing, so
transposed, broadcast or strided query/key/value tensors cost nothing extra in the inner
loops. Causal attention stops each unit's keys at its last row and masks within the block.
"""

from __future__ import annotations

import math

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dtypes import compute_type, literal
from kernelwright.tools.lower.emit.attention import attention_units, key_end
from kernelwright.tools.lower.emit.common import finish_element
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.ir import Attention
from kernelwright.tools.lower.schedule import Group

ATTENTION_CHOICES = {"br": [1, 4, 8, 16, 32, 64], "bc": [16, 32, 64, 128]}
LOCAL_ELEMENTS = 1 << 15  # the unit's tiles: at most 128 KB of float per thread's stack


def attention_defaults(a: Attention) -> dict[str, int]:
    """Query rows per unit: as many as keep 64 units for the threads (each unit packs its
    keys and values once, so more rows per unit amortise the packing), at most 32."""
    nb = math.prod(a.batch) if a.batch else 1
    br = 32
    while br > 4 and nb * -(-a.lq // br) < 64:
        br //= 2
    return {"br": br, "bc": 64}


def attention_tiles(a: Attention, br: int, bc: int) -> tuple[int, int]:
    """``(br, bc)`` clamped to the problem and to ``LOCAL_ELEMENTS`` (keys shrink first)."""
    br, bc = max(1, min(br, a.lq)), max(1, min(bc, a.skv))

    def size(r: int, c: int) -> int:
        return r * a.d + a.d * c + c * a.dv + r * c + r * a.dv + 2 * r

    while size(br, bc) > LOCAL_ELEMENTS and bc > 8:
        bc //= 2
    while size(br, bc) > LOCAL_ELEMENTS and br > 1:
        br //= 2
    return br, bc


def attention_body_cpp(k: KernelCtx, grp: Group, names: dict[int, str], unit: str, br: int,
                       bc: int) -> int:
    a: Attention = grp.main[0]  # type: ignore[assignment]
    assert a.qload is not None and a.kload is not None and a.vload is not None
    br, bc = attention_tiles(a, br, bc)
    batch, units = attention_units(k, a, unit, br)
    ct = compute_type(a.dtype)
    zero, d, dv, lq = literal(0, a.dtype), a.d, a.dv, a.lq
    for decl in (f"qt[{br}][{d}]", f"kt[{d}][{bc}]", f"vt[{bc}][{dv}]", f"st[{br}][{bc}]",
                 f"acc[{br}][{dv}]", f"mx[{br}]", f"den[{br}]"):
        k.emit(f"alignas(64) {ct} {decl};")
    with k.block(f"for (int r = 0; r < {br}; ++r)"):
        k.emit(f"mx[r] = -({ct})KW_INF;")
        k.emit(f"den[r] = {zero};")
        k.emit("#pragma omp simd")
        k.emit(f"for (int e = 0; e < {dv}; ++e) acc[r][e] = {zero};")
    scale = literal(a.scale, a.dtype)
    with k.loop("r", br) as r:
        row = Ix.atom(k.let(f"kw_min(i0 + {r.render()}, {lq - 1})", "int"), (0, lq - 1))
        with k.loop("dd", d) as dd:
            k.emit(f"qt[{r.render()}][{dd.render()}] = "
                   f"{a.qload(k, batch + [row, dd])} * {scale};")
    k.emit(f"const int jend = {key_end(a, f'i0 + {br - 1}')};")
    with k.block(f"for (int j0 = 0; j0 < jend; j0 += {bc})"):
        k.emit(f"const int jn = kw_min({bc}, jend - j0);")
        _pack_keys(k, a, batch, bc)
        _scores(k, a, br, bc)
        _online_softmax(k, a, br, bc, ct)
        _values(k, a, br)
    with k.loop("r", br) as r:
        with k.block(f"if (i0 + {r.render()} < {lq})"):
            row = Ix.atom(k.let(f"i0 + {r.render()}", "int"), (0, lq - 1))
            inv = k.let(f"{literal(1, a.dtype)} / den[{r.render()}]", ct)
            with k.loop("e", dv) as e:
                out = k.let(f"acc[{r.render()}][{e.render()}] * {inv}", ct)
                finish_element(k, grp, names, batch + [row, e], out)
    return units


def _pack_keys(k: KernelCtx, a: Attention, batch: list[Ix], bc: int) -> None:
    """``kt[d][c] = key(j0 + c, d)``, ``vt[c][e] = value(j0 + c, e)`` (rows past the keys
    read the last key; their scores are masked)."""
    with k.loop("c", bc) as c:
        key = Ix.atom(k.let(f"kw_min(j0 + {c.render()}, {a.skv - 1})", "int"), (0, a.skv - 1))
        with k.loop("dd", a.d) as dd:
            k.emit(f"kt[{dd.render()}][{c.render()}] = {a.kload(k, batch + [key, dd])};")
        with k.loop("e", a.dv) as e:
            k.emit(f"vt[{c.render()}][{e.render()}] = {a.vload(k, batch + [key, e])};")


def _row_step(br: int) -> int:
    """Query rows computed together (sharing each key and value load): 4, or fewer."""
    return 4 if br % 4 == 0 else (2 if br % 2 == 0 else 1)


def _scores(k: KernelCtx, a: Attention, br: int, bc: int) -> None:
    """``st = qt kt`` (already scaled), then keys past ``jn`` or after the row masked. The
    simd lanes are keys; each lane keeps ``_row_step`` rows' sums in registers over ``d``."""
    ct = compute_type(a.dtype)
    rs = _row_step(br)
    zero = literal(0, a.dtype)
    with k.block(f"for (int r = 0; r < {br}; r += {rs})"):
        k.emit("#pragma omp simd")
        with k.block(f"for (int c = 0; c < {bc}; ++c)"):
            k.emit(f"{ct} " + ", ".join(f"s{i} = {zero}" for i in range(rs)) + ";")
            with k.block(f"for (int dd = 0; dd < {a.d}; ++dd)"):
                k.emit(f"const {ct} kv = kt[dd][c];")
                for i in range(rs):
                    k.emit(f"s{i} += qt[r + {i}][dd] * kv;")
            for i in range(rs):
                k.emit(f"st[r + {i}][c] = s{i};")
    with k.block(f"for (int r = 0; r < {br}; ++r)"):
        limit = "kw_min(jn, i0 + r - j0 + 1)" if a.causal else "jn"
        k.emit(f"for (int c = kw_max({limit}, 0); c < {bc}; ++c) st[r][c] = -({ct})KW_INF;")


def _values(k: KernelCtx, a: Attention, br: int) -> None:
    """``acc += st vt``: the simd lanes are value columns, ``_row_step`` rows at a time."""
    ct = compute_type(a.dtype)
    rs = _row_step(br)
    with k.block(f"for (int r = 0; r < {br}; r += {rs})"):
        k.emit("#pragma omp simd")
        with k.block(f"for (int e = 0; e < {a.dv}; ++e)"):
            k.emit(f"{ct} " + ", ".join(f"o{i} = acc[r + {i}][e]" for i in range(rs)) + ";")
            with k.block("for (int c = 0; c < jn; ++c)"):
                k.emit(f"const {ct} vv = vt[c][e];")
                for i in range(rs):
                    k.emit(f"o{i} += st[r + {i}][c] * vv;")
            for i in range(rs):
                k.emit(f"acc[r + {i}][e] = o{i};")


def _online_softmax(k: KernelCtx, a: Attention, br: int, bc: int, ct: str) -> None:
    """Per row: the block's maximum, ``st`` replaced by ``exp(st - new max)``, the row's
    denominator and output rescaled by ``exp(old max - new max)``."""
    with k.block(f"for (int r = 0; r < {br}; ++r)"):
        k.emit(f"{ct} top = mx[r];")
        k.emit("#pragma omp simd reduction(max:top)")
        k.emit(f"for (int c = 0; c < {bc}; ++c) top = st[r][c] > top ? st[r][c] : top;")
        k.emit(f"const {ct} corr = {k.call('exp', ct, 'mx[r] - top')};")
        k.emit(f"{ct} sum = {literal(0, a.dtype)};")
        k.emit("#pragma omp simd reduction(+:sum)")
        with k.block(f"for (int c = 0; c < {bc}; ++c)"):
            k.emit(f"const {ct} p = {k.call('exp', ct, 'st[r][c] - top')};")
            k.emit("st[r][c] = p;")
            k.emit("sum += p;")
        k.emit("den[r] = den[r] * corr + sum;")
        k.emit("mx[r] = top;")
        k.emit("#pragma omp simd")
        k.emit(f"for (int e = 0; e < {a.dv}; ++e) acc[r][e] *= corr;")
