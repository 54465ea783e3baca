"""GEMM and convolution: register tiles, and the set-up every backend's tiles share.

``gemm_tiles`` and ``conv_geometry`` (with ``conv_channel_block`` and ``conv_output``) are
the shared set-up: unit -> tile coordinates, channel blocks, bias and epilogue. The bodies
here are the one-tile-per-work-item forms SYCL and CUDA use; the C++ backend's simd forms
live in ``backends/cpp_gemm.py`` and ``backends/cpp_conv.py`` on the same set-up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dtypes import compute_type, literal
from kernelwright.tools.lower.emit.common import finish_element, index_vars
from kernelwright.tools.lower.index import Ix, linear
from kernelwright.tools.lower.ir import Conv, Gemm
from kernelwright.tools.lower.schedule import Group

# -- GEMM --------------------------------------------------------------------------------


def gemm_tiles(k: KernelCtx, g: Gemm, unit: str, rm: int, rn: int,
               rows_fastest: bool) -> tuple[list[Ix], int]:
    """Declare the tile of ``unit``: ``bt`` (batch), ``m0``/``n0`` (its first row and
    column); neighbouring units step along N, or along M when ``rows_fastest``. Returns the
    batch index and the number of units."""
    nb = math.prod(g.batch) if g.batch else 1
    mt, nt = -(-g.m // rm), -(-g.n // rn)
    k.emit(f"const int bt = {unit} / {mt * nt};")
    if rows_fastest:
        k.emit(f"const int n0 = ({unit} / {mt}) % {nt} * {rn};")
        k.emit(f"const int m0 = {unit} % {mt} * {rm};")
    else:
        k.emit(f"const int m0 = ({unit} / {nt}) % {mt} * {rm};")
        k.emit(f"const int n0 = {unit} % {nt} * {rn};")
    batch = index_vars(k, Ix.atom("bt", (0, nb - 1)), tuple(g.batch), "b") if g.batch else []
    return batch, nb * mt * nt


def gemm_body(k: KernelCtx, grp: Group, names: dict[int, str], unit: str, rm: int,
              rn: int) -> int:
    g: Gemm = grp.main[0]  # type: ignore[assignment]
    batch, units = gemm_tiles(k, g, unit, rm, rn, rows_fastest=False)
    ct = compute_type(g.dtype)
    acc = [[k.var(ct, literal(0, g.dtype), "acc") for _ in range(rn)] for _ in range(rm)]
    rows = [k.let(f"kw_min(m0 + {r}, {g.m - 1})", "int") for r in range(rm)]
    cols = [k.let(f"kw_min(n0 + {s}, {g.n - 1})", "int") for s in range(rn)]
    assert g.a is not None and g.b is not None
    with k.loop("kk", g.kdim) as kk:
        av = [g.a(k, batch + [Ix.atom(rows[r], (0, g.m - 1)), kk]) for r in range(rm)]
        bv = [g.b(k, batch + [kk, Ix.atom(cols[s], (0, g.n - 1))]) for s in range(rn)]
        for r in range(rm):
            for s in range(rn):
                k.emit(f"{acc[r][s]} += {av[r]} * {bv[s]};")
    for r in range(rm):
        for s in range(rn):
            with k.block(f"if (m0 + {r} < {g.m} && n0 + {s} < {g.n})"):
                idx = batch + [Ix.atom(rows[r], (0, g.m - 1)), Ix.atom(cols[s], (0, g.n - 1))]
                finish_element(k, grp, names, idx, acc[r][s])
    return units


def operand_strides(k: KernelCtx, body, idx: list[Ix]) -> dict[str, int]:
    """Element strides of the buffer loads ``body(idx)`` makes, per loop variable of ``idx``.

    A variable a load does not use has stride 0; one several loads use with different strides
    gets the largest. A variable inside a division or remainder (a batch index that the
    operand splits, as einsum's merged ``b c h`` batch) counts as used, with that term's
    coefficient: reading it as unused made a per-batch operand look shared, and the GEMM
    folded the batch onto one copy of it. Runs ``body`` under a recording handler (nothing
    reaches ``k``)."""
    probe = KernelCtx(k.dialect, dict(k.realized), idx_type=k.idx_type)
    probe.owned = set(k.owned)
    probe.bound = {i: list(b) for i, b in k.bound.items()}
    seen: dict[str, int] = {}
    orig = probe.load_buffer

    def load_buffer(name, node, ix):
        flat = linear(ix, node.shape)
        for atom, coef in flat.terms:
            for var in flat.variables_of(atom):
                seen[var] = max(seen.get(var, 0), abs(coef))
        return orig(name, node, ix)

    probe.load_buffer = load_buffer  # type: ignore[method-assign]
    try:
        body(probe, idx)
    except Exception:  # a value that cannot be probed: say "not contiguous"
        return {}
    return seen


# -- convolution -------------------------------------------------------------------------


@dataclass
class ConvGeometry:
    """Sizes of a convolution and its blocking into ``ocb`` output channels per unit."""

    nd: int  # spatial dims
    N: int
    Co: int
    osp: tuple[int, ...]  # output spatial shape
    isp: tuple[int, ...]  # input spatial shape
    ksz: tuple[int, ...]  # kernel spatial shape
    cin_g: int  # input channels per group
    cout_g: int  # output channels per group
    ocb: int  # output channels per unit (divides cout_g)
    nblk: int  # channel blocks


def conv_geometry(c: Conv, ocb: int) -> ConvGeometry:
    x, w = c.x, c.w
    assert x is not None and w is not None
    Co = c.shape[1]
    cin_g, cout_g = x.shape[1] // c.groups, Co // c.groups
    ocb = max(1, min(ocb, cout_g))
    while cout_g % ocb:
        ocb -= 1
    return ConvGeometry(len(x.shape) - 2, c.shape[0], Co, tuple(c.shape[2:]),
                        tuple(x.shape[2:]), tuple(w.shape[2:]), cin_g, cout_g, ocb, Co // ocb)


def conv_channel_block(k: KernelCtx, geo: ConvGeometry) -> None:
    """Declare the unit's first output channel ``oc0`` and its group ``g``."""
    k.emit(f"const int oc0 = cb * {geo.ocb};")
    k.emit(f"const int g = oc0 / {geo.cout_g};")


def conv_output(k: KernelCtx, grp: Group, names: dict[int, str], idx: list[Ix],
                acc: str) -> None:
    """Add the bias to an output element, then bind, store and write the epilogue."""
    c: Conv = grp.main[0]  # type: ignore[assignment]
    ct = compute_type(c.dtype)
    v = acc
    if c.bias is not None:
        v = k.let(f"{acc} + ({ct}){c.bias.load(k, [idx[1]])}", ct)
    finish_element(k, grp, names, idx, v)


def conv_body(k: KernelCtx, grp: Group, names: dict[int, str], unit: str, ocb: int,
              lanes: tuple[str, str, int] | None = None) -> int:
    """Direct convolution: a unit is (n, block of ``ocb`` output channels, one position).

    ``lanes = (group, lane, wg)``: work-group ``group`` covers ``wg`` neighbouring positions
    along one output row (the row padded to whole work-groups; lanes past its end store
    nothing), so a work-group's lanes read neighbouring inputs and share the row's image,
    channel and outer positions (a vectoriser across work-items makes those vector loads)."""
    c: Conv = grp.main[0]  # type: ignore[assignment]
    geo = conv_geometry(c, ocb)
    P = math.prod(geo.osp)
    if lanes is None:
        units = geo.N * geo.nblk * P
        k.emit(f"const int p = {unit} % {P};")
        k.emit(f"const int cb = ({unit} / {P}) % {geo.nblk};")
        k.emit(f"const int nn = {unit} / {P * geo.nblk};")
        pos = index_vars(k, Ix.atom("p", (0, P - 1)), geo.osp, "q")
        _conv_units(k, grp, names, geo, pos)
        return units
    group, lane, wg = lanes
    ow = geo.osp[-1]
    outer, blocks = P // ow, -(-ow // wg)
    k.emit(f"const int kw_row = {group} / {blocks};")
    k.emit(f"const int q_last = {group} % {blocks} * {wg} + {lane};")
    k.emit(f"const int cb = (kw_row / {outer}) % {geo.nblk};")
    k.emit(f"const int nn = kw_row / {outer * geo.nblk};")
    k.emit(f"const int kw_outer = kw_row % {outer};")
    pos = index_vars(k, Ix.atom("kw_outer", (0, outer - 1)), geo.osp[:-1], "q")
    with k.block(f"if (q_last < {ow})"):
        _conv_units(k, grp, names, geo, [*pos, Ix.atom("q_last", (0, ow - 1))])
    return geo.N * geo.nblk * outer * blocks * wg


def _conv_units(k: KernelCtx, grp: Group, names: dict[int, str], geo: ConvGeometry,
                pos: list[Ix]) -> None:
    """The unit's ``ocb`` outputs at positions ``pos`` (``cb``, ``nn`` declared)."""
    c: Conv = grp.main[0]  # type: ignore[assignment]
    x, w = c.x, c.w
    assert x is not None and w is not None
    ocb, Co, cin_g, cout_g = geo.ocb, geo.Co, geo.cin_g, geo.cout_g
    conv_channel_block(k, geo)
    ct = compute_type(c.dtype)
    acc = [k.var(ct, literal(0, c.dtype), "acc") for _ in range(ocb)]
    nI = Ix.atom("nn", (0, geo.N - 1))
    with k.loop("ic", cin_g) as ic:
        cin = k.let(f"g * {cin_g} + {ic.render()}", "int")
        opened, taps, ipos = [], [], []
        for d in range(geo.nd):
            # fresh names: a fixed "t{d}" collided with the let names (t1, t2, ...) when nd = 3
            cm = k.loop(k.fresh("tap"), geo.ksz[d])
            taps.append(cm.__enter__())
            opened.append(cm)
        conds = []
        for d in range(geo.nd):
            o = pos[d].render()
            t = taps[d].render()
            s, p, dl = c.stride[d], c.padding[d], c.dilation[d]
            if not c.transposed:
                ipos.append(k.let(f"({o}) * {s} - {p} + {t} * {dl}", "int"))
                conds.append(f"{ipos[-1]} >= 0 && {ipos[-1]} < {geo.isp[d]}")
            else:
                num = k.let(f"({o}) + {p} - {t} * {dl}", "int")
                ipos.append(k.let(f"{num} / {s}", "int"))
                conds.append(f"{num} >= 0 && {num} % {s} == 0 && {ipos[-1]} < {geo.isp[d]}")
        with k.block(f"if ({' && '.join(conds) or 'true'})"):
            xi = [nI, Ix.atom(cin, (0, x.shape[1] - 1))] + [
                Ix.atom(ip, (0, s - 1)) for ip, s in zip(ipos, geo.isp, strict=True)]
            xv = x.load(k, xi)
            for j in range(ocb):
                ocj = k.let(f"oc0 + {j}", "int")
                if c.transposed:
                    wi = [Ix.atom(cin, (0, w.shape[0] - 1)),
                          Ix.atom(k.let(f"{ocj} - g * {cout_g}", "int"), (0, w.shape[1] - 1))]
                else:
                    wi = [Ix.atom(ocj, (0, Co - 1)), ic]
                wv = w.load(k, wi + taps)
                k.emit(f"{acc[j]} += {xv} * {wv};")
        for cm in reversed(opened):
            cm.__exit__(None, None, None)
    for j in range(ocb):
        ocj = k.let(f"oc0 + {j}", "int")
        conv_output(k, grp, names, [nI, Ix.atom(ocj, (0, Co - 1))] + pos, acc[j])
