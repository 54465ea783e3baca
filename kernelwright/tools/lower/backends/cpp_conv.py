"""The C++ direct convolution emitter: output positions along the row are a simd loop."""

from __future__ import annotations

import math

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dtypes import compute_type, literal
from kernelwright.tools.lower.emit.anchor import conv_channel_block, conv_geometry, conv_output
from kernelwright.tools.lower.emit.common import index_vars
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.ir import Conv
from kernelwright.tools.lower.schedule import Group


def conv_body_cpp(k: KernelCtx, grp: Group, names: dict[int, str], unit: str, ocb: int,
                  pw: int) -> int:
    """C++ direct convolution: a unit is (n, ``ocb`` output channels, one output row,
    ``pw`` positions along the last spatial dim); those positions are an OpenMP simd loop
    with ``ocb`` x ``pw`` accumulators, so input loads are contiguous along the row (stride
    1) and each weight is loaded once per tap. Out-of-range taps (padding, the row's last
    tile) load a clamped element and add zero."""
    c: Conv = grp.main[0]  # type: ignore[assignment]
    x, w = c.x, c.w
    assert x is not None and w is not None
    geo = conv_geometry(c, ocb)
    nd, N, Co, osp, isp, ksz = geo.nd, geo.N, geo.Co, geo.osp, geo.isp, geo.ksz
    cin_g, ocb, nblk = geo.cin_g, geo.ocb, geo.nblk
    W, IW = osp[-1], isp[-1]
    pw = max(1, min(pw, W))
    nwt = -(-W // pw)
    rows = math.prod(osp[:-1])
    units = N * nblk * rows * nwt
    k.emit(f"const int wt = {unit} % {nwt};")
    k.emit(f"const int rowi = ({unit} / {nwt}) % {rows};")
    k.emit(f"const int cb = ({unit} / {nwt * rows}) % {nblk};")
    k.emit(f"const int nn = {unit} / {nwt * rows * nblk};")
    pos = index_vars(k, Ix.atom("rowi", (0, rows - 1)), osp[:-1], "q") if nd > 1 else []
    conv_channel_block(k, geo)
    k.emit(f"const int w0 = wt * {pw};")
    ct = compute_type(c.dtype)
    zero = literal(0, c.dtype)
    k.emit(f"{ct} acc[{ocb}][{pw}];")
    jv, sv = k.fresh("j"), k.fresh("s")  # every local is declared once (no shadowing)
    with k.block(f"for (int {jv} = 0; {jv} < {ocb}; ++{jv})"):
        k.emit("#pragma omp simd")
        with k.block(f"for (int {sv} = 0; {sv} < {pw}; ++{sv})"):
            k.emit(f"acc[{jv}][{sv}] = {zero};")
    nI = Ix.atom("nn", (0, N - 1))
    s_l, p_l, d_l = c.stride[-1], c.padding[-1], c.dilation[-1]
    with k.loop("ic", cin_g) as ic:
        cin = k.let(f"g * {cin_g} + {ic.render()}", "int")
        opened, taps, ipos, conds = [], [], [], []
        for d in range(nd):
            cm = k.loop(f"kt{d}", ksz[d])
            taps.append(cm.__enter__())
            opened.append(cm)
        for d in range(nd - 1):
            o = pos[d].render()
            ipos.append(k.let(f"({o}) * {c.stride[d]} - {c.padding[d]} + kt{d} * "
                              f"{c.dilation[d]}", "int"))
            conds.append(f"{ipos[-1]} >= 0 && {ipos[-1]} < {isp[d]}")
        with k.block(f"if ({' && '.join(conds) or 'true'})"):
            wv = []
            for j in range(ocb):
                ocj = k.let(f"oc0 + {j}", "int")
                wv.append(w.load(k, [Ix.atom(ocj, (0, Co - 1)), ic] + taps))
            head = [nI, Ix.atom(cin, (0, x.shape[1] - 1))] + [
                Ix.atom(ip, (0, sz - 1)) for ip, sz in zip(ipos, isp[:-1], strict=True)]

            def row_loop(contiguous: bool) -> None:
                sv, iw, iwc = k.fresh("s"), k.fresh("iw"), k.fresh("iwc")
                k.emit("#pragma omp simd")
                with k.block(f"for (int {sv} = 0; {sv} < {pw}; ++{sv})"):
                    k.emit(f"const int {iw} = (w0 + {sv}) * {s_l} - {p_l} + kt{nd - 1} * "
                           f"{d_l};")
                    if contiguous:
                        xv = x.load(k, head + [Ix.atom(iw, (0, IW - 1))])
                    else:
                        k.emit(f"const int {iwc} = kw_min(kw_max({iw}, 0), {IW - 1});")
                        raw = x.load(k, head + [Ix.atom(iwc, (0, IW - 1))])
                        xv = k.let(f"({iw} >= 0 && {iw} < {IW} ? {raw} : {zero})", ct)
                    for j in range(ocb):
                        k.emit(f"acc[{j}][{sv}] += {xv} * {wv[j]};")

            if p_l == 0:  # interior tiles read inside the row: plain contiguous loads
                with k.block(f"if (w0 + {pw} <= {W})"):
                    row_loop(True)
                with k.block("else"):
                    row_loop(False)
            else:
                row_loop(False)
        for cm in reversed(opened):
            cm.__exit__(None, None, None)
    jv, sv = k.fresh("j"), k.fresh("s")
    with k.block(f"for (int {jv} = 0; {jv} < {ocb}; ++{jv})"):
        with k.block(f"for (int {sv} = 0; {sv} < {pw}; ++{sv})"):
            with k.block(f"if (w0 + {sv} < {W})"):
                k.emit(f"const int ocj = oc0 + {jv};")
                k.emit(f"const int ow = w0 + {sv};")
                idx = [nI, Ix.atom("ocj", (0, Co - 1))] + pos + [Ix.atom("ow", (0, W - 1))]
                conv_output(k, grp, names, idx, k.let(f"acc[{jv}][{sv}]", ct))
    return units
