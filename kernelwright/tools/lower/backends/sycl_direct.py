"""SYCL direct convolution on explicit vectors (depthwise and few-channel convolutions).

The direct form (``g<i>.algo=direct``) of a convolution whose input is a row-major buffer and
whose last dim has stride 1: a work-item (a work-group of one, like the packed GEMM kernel:
on the OpenCL CPU device explicit vectors in one work-item beat scalar work-items over
sub-group lanes) computes ``vw`` neighbouring outputs along one output row for ``ocb``
output channels. Per input channel and tap it loads ``vw`` neighbouring inputs as one vector
(lanes outside the input, the padding, read as zeros) and multiplies them by the tap's
weight, broadcast, into one accumulator per channel; the finished outputs pass through the
group's store (bias, epilogue) one element at a time. A transposed convolution gathers the
same way (input ``(o + pad - tap * dilation) / stride`` where that divides; along the last dim
the stride must be 1). Other convolutions (a strided last dim, a computed input) keep the
scalar work-item form of ``emit/anchor.py``.
"""

from __future__ import annotations

import math
from typing import Any

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dtypes import compute_type
from kernelwright.tools.lower.emit.anchor import conv_channel_block, conv_geometry, conv_output
from kernelwright.tools.lower.emit.common import KernelSource, index_vars, kernel_info, signature
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.microkernels.lowered import contiguous_element
from kernelwright.tools.lower.schedule import Group

# a work-item takes whole output rows: up to this many, while there are at least MIN_ITEMS
# work-items (a work-item per row of a few vectors spent more in its own start than in work)
MAX_ROWS_PER_ITEM = 8
MIN_ITEMS = 1024
# the vector form is the default up to this many output channels per group (the implicit
# GEMM's register tile reuses each input more where there are more)
DIRECT_MAX_COUT = 32


def vectors_fit(c) -> bool:
    """The vector form's geometry: stride 1 along the last dim (a transposed convolution's
    outputs there read neighbouring inputs too), float or double (the input must also be a
    row-major buffer: ``direct_vectors_apply``)."""
    return c.stride[-1] == 1 and compute_type(c.dtype) in ("float", "double")


def direct_defaults(c, algo: str) -> dict[str, Any]:
    """``algo``, ``form``, ``vw`` of convolution ``c`` on SYCL, given the implicit-GEMM rule's
    ``algo``: the vector form for a forward convolution where it fits and there are at most
    ``DIRECT_MAX_COUT`` output channels per group (measured, in-process against the staged
    implicit GEMM on KernelBench convolutions of 8-32 channels, 3x3: 4.0 -> 2.6, 7.3 -> 5.0,
    5.7 -> 4.6, 2.6 -> 2.4, 2.8 -> 2.5, 4.8 -> 3.5 ms), ``vw`` 16 (on a depthwise 3x7: 4 / 8 /
    16 lanes 5.1 / 2.5 / 2.1 ms). Not for transposed convolutions, whose gather form pads each
    row by the kernel's reach, so most vectors straddle the padding: l1_69 (ConvTranspose2d 16
    -> 32, 3x5) 3.4 ms as implicit GEMM, 10.5 ms as vectors; l1_61 (3-D) 7.0 against 16.0."""
    if vectors_fit(c) and not c.transposed and c.shape[1] // c.groups <= DIRECT_MAX_COUT:
        algo = "direct"
    return {"algo": algo, "form": "vectors", **({"vw": 16} if algo == "direct" else {})}


def direct_vectors_apply(k: KernelCtx, grp: Group) -> bool:
    """Whether ``grp``'s convolution has the vector form: ``vectors_fit``, an input buffer
    whose last dim is contiguous, and offsets that fit an ``int``."""
    c = grp.main[0]
    if not vectors_fit(c) or max(c.x.numel, c.numel) >= 2**31 - 1:
        return False
    zero = [Ix.c(0)] * len(c.x.shape)
    saved = k.lines
    k.lines = []
    try:
        return contiguous_element(k, c.x, zero, compute_type(c.dtype)) is not None
    finally:
        k.lines = saved


def direct_conv_sycl(k: KernelCtx, grp: Group, names: dict[int, str],
                     params: dict[str, Any]) -> KernelSource:
    """The whole kernel (module notes); ``ocb`` and ``vw`` from the group's parameters."""
    c = grp.main[0]
    geo = conv_geometry(c, int(params.get("ocb", 4)))
    ct = compute_type(c.dtype)
    vw = int(params.get("vw", 8))
    ow = geo.osp[-1]
    outer = math.prod(geo.osp[:-1])
    rows = geo.N * geo.nblk * outer
    rpi = max(1, min(MAX_ROWS_PER_ITEM, rows // MIN_ITEMS))
    units = -(-rows // rpi)
    with k.block(f"for (int kw_r = 0; kw_r < {rpi}; ++kw_r)"):
        k.emit(f"const int kw_row = kw_t * {rpi} + kw_r;")
        k.emit(f"if (kw_row >= {rows}) break;")
        k.emit(f"const int kw_outer = kw_row % {outer};")
        k.emit(f"const int cb = kw_row / {outer} % {geo.nblk};")
        k.emit(f"const int nn = kw_row / {outer * geo.nblk};")
        pos = index_vars(k, Ix.atom("kw_outer", (0, outer - 1)), geo.osp[:-1], "q")
        conv_channel_block(k, geo)
        with k.block(f"for (int kw_w0 = 0; kw_w0 < {ow}; kw_w0 += {vw})"):
            _block(k, grp, names, geo, pos, vw)
    args, decl = signature(k)
    text = (f'extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))\n'
            f"void {grp.name}({decl}) {{\n"
            "    auto it = sycl::ext::oneapi::this_work_item::get_nd_item<1>();\n"
            f"    const int kw_t = it.get_global_id(0);\n    if (kw_t >= {units}) return;\n"
            f"    /* SYCL direct convolution on vec<{ct}, {vw}>: {geo.ocb} output channels x "
            f"{vw} positions at a time, {rpi} output rows per work-item */\n"
            + "\n".join(k.lines) + "\n}\n")
    return KernelSource(grp.name, text, args, units, 1, info=kernel_info(grp, k))


def _block(k: KernelCtx, grp: Group, names: dict[int, str], geo, pos: list[Ix],
           vw: int) -> None:
    """``vw`` outputs from ``kw_w0`` along the row, ``ocb`` channels from ``oc0``."""
    c = grp.main[0]
    x, w = c.x, c.w
    ct = compute_type(c.dtype)
    vt = f"sycl::vec<{ct}, {vw}>"
    ow, width, nd = geo.osp[-1], geo.isp[-1], geo.nd
    nI = Ix.atom("nn", (0, geo.N - 1))
    k.emit(f"const int kw_nv = kw_w0 + {vw} <= {ow} ? {vw} : {ow} - kw_w0;")
    for j in range(geo.ocb):
        k.emit(f"{vt} kw_acc{j}(0);")
    with k.loop("ic", geo.cin_g) as ic:
        cin = Ix.atom(k.let(f"g * {geo.cin_g} + {ic.render()}", "int"), (0, x.shape[1] - 1))
        opened, taps = [], []
        for d in range(nd):
            cm = k.loop(k.fresh("tap"), geo.ksz[d])
            taps.append(cm.__enter__())
            opened.append(cm)
        ipos, conds = [], []
        for d in range(nd - 1):  # the outer positions: the same for every lane
            s, p, dl, o, t = (c.stride[d], c.padding[d], c.dilation[d], pos[d].render(),
                              taps[d].render())
            if c.transposed:  # output o takes input (o + p - t * dl) / s where that divides
                num = k.let(f"({o}) + {p} - {t} * {dl}", "int")
                ip = k.let(f"{num} / {s}", "int")
                conds.append(f"{num} >= 0 && {num} % {s} == 0 && {ip} < {geo.isp[d]}")
            else:
                ip = k.let(f"({o}) * {s} - {p} + {t} * {dl}", "int")
                conds.append(f"{ip} >= 0 && {ip} < {geo.isp[d]}")
            ipos.append(Ix.atom(ip, (0, geo.isp[d] - 1)))
        with k.block(f"if ({' && '.join(conds) or 'true'})"):
            p, dl, t = c.padding[-1], c.dilation[-1], taps[-1].render()
            base = k.let(f"kw_w0 + {p} - {t} * {dl}" if c.transposed
                         else f"kw_w0 - {p} + {t} * {dl}", "int")
            k.emit(f"{vt} kw_x;")
            at = [nI, cin, *ipos, Ix.atom(base, (0, width - 1))]
            name = k.realized[x.id]
            k.use(name, x, "r")  # read through its offsets only, never through x.load
            off = k.let(k.flat(name, x, at).render(), "int")
            # every lane that is an output (kw_nv of them) reads inside the input row; the
            # others may read on into the next row, short of the buffer's end
            with k.block(f"if ({base} >= 0 && {base} + kw_nv <= {width} && "
                         f"{off} + {vw} <= {x.numel})"):
                first = contiguous_element(k, x, at, ct)
                k.emit(f"__builtin_memcpy(&kw_x, &{first}, sizeof({vt}));")
            with k.block("else"):  # zeros, then the lanes [lo, hi) inside the row copied
                k.emit(f"{ct} kw_xa[{vw}];")
                k.emit(f"for (int kw_l = 0; kw_l < {vw}; ++kw_l) kw_xa[kw_l] = ({ct})0;")
                k.emit(f"const int kw_lo = kw_min(kw_max(-({base}), 0), {vw});")
                k.emit(f"const int kw_hi = kw_max(kw_lo, kw_min({width} - ({base}), {vw}));")
                with k.block("if (kw_hi > kw_lo)"):
                    start = Ix.atom(k.let(f"{base} + kw_lo", "int"), (0, width - 1))
                    src = contiguous_element(k, x, [nI, cin, *ipos, start], ct)
                    k.emit(f"const {ct}* kw_src = &{src};")
                    k.emit("for (int kw_l = kw_lo; kw_l < kw_hi; ++kw_l) "
                           "kw_xa[kw_l] = kw_src[kw_l - kw_lo];")
                k.emit(f"__builtin_memcpy(&kw_x, kw_xa, sizeof({vt}));")
            for j in range(geo.ocb):
                oc = k.let(f"oc0 + {j}", "int")
                if c.transposed:  # W is [Cin, Cout / groups, taps...]
                    own = k.let(f"{oc} - g * {geo.cout_g}", "int")
                    wv = w.load(k, [cin, Ix.atom(own, (0, w.shape[1] - 1)), *taps])
                else:
                    wv = w.load(k, [Ix.atom(oc, (0, geo.Co - 1)), ic, *taps])
                k.emit(f"kw_acc{j} = sycl::fma({vt}(({ct}){wv}), kw_x, kw_acc{j});")
        for cm in reversed(opened):
            cm.__exit__(None, None, None)
    for j in range(geo.ocb):
        k.emit(f"{ct} kw_out{j}[{vw}];")
        k.emit(f"__builtin_memcpy(kw_out{j}, &kw_acc{j}, sizeof({vt}));")
    with k.block("for (int kw_l = 0; kw_l < kw_nv; ++kw_l)"):
        k.emit("const int kw_ow = kw_w0 + kw_l;")
        last = Ix.atom("kw_ow", (0, ow - 1))
        for j in range(geo.ocb):
            oc = Ix.atom(k.let(f"oc0 + {j}", "int"), (0, geo.Co - 1))
            conv_output(k, grp, names, [nI, oc, *pos, last], f"kw_out{j}[kw_l]")
