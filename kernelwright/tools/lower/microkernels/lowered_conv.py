"""The lowering's C++ convolution as implicit GEMM on the packed micro-kernel.

Per group ``g`` (the GEMM batch): ``out[n, g*Cg + i, pos] = sum_kk W[g*Cg + i, kk] *
X_col[kk, (n, pos)]`` with ``kk = (ic, taps)``; the im2col matrix is never stored: packing
B reads the input at ``pos * stride - pad + tap * dilation`` (zero outside), so the
micro-kernel sees the same unit-stride panels as a GEMM. Images fold into the columns
(weights are shared by them). Schedule parameter ``g<i>.algo``: ``gemm`` here, ``direct``
the register-tiled direct convolution (kept for depthwise and tiny channel counts).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kernelwright.tools.lower.dtypes import compute_type, literal
from kernelwright.tools.lower.index import Ix, unravel
from kernelwright.tools.lower.microkernels.isa import detect_isa
from kernelwright.tools.lower.microkernels.lowered import capture_fragment
from kernelwright.tools.lower.microkernels.packed_gemm import (
    GemmProblem,
    default_blocking,
    gemm_source,
)

if TYPE_CHECKING:
    from kernelwright.tools.lower.codegen import KernelCtx


def conv_gemm_shape(c) -> tuple[int, int, int, int]:
    """``(groups, M, N, K)`` of convolution node ``c`` as implicit GEMM."""
    G = c.groups
    return (G, c.shape[1] // G, c.shape[0] * math.prod(c.shape[2:]),
            c.x.shape[1] // G * math.prod(c.w.shape[2:]))


def conv_defaults(c) -> dict[str, Any]:
    """Implicit GEMM where the reduction is long enough to fill the micro-kernel (at least
    64 input channel x tap products and 16 output channels per group; measured: a 3x3
    convolution from 3 channels, K = 27, runs faster direct); direct otherwise
    (depthwise, tiny channel counts) and for transposed convolutions."""
    if c.transposed or compute_type(c.dtype) not in ("float", "double"):
        return {"algo": "direct"}
    _, m, _, kd = conv_gemm_shape(c)
    return {"algo": "gemm" if kd >= 64 and m >= 16 else "direct"}


def _atoms(k: KernelCtx, flat: str, shape: tuple[int, ...], prefix: str) -> list[Ix]:
    out = []
    for j, e in enumerate(unravel(Ix.atom(flat, (0, math.prod(shape) - 1)), shape)):
        name = k.fresh(prefix)
        k.emit(f"const int {name} = {e.render()};")
        out.append(Ix.atom(name, (0, shape[j] - 1)))
    return out


def lowered_conv(k: KernelCtx, c, params: dict[str, Any],
                 finish: Callable[[list[Ix], str], None],
                 source: Callable[..., tuple[str, list[str]]] = gemm_source
                 ) -> tuple[str, list[str]]:
    """``(helpers, body)`` of convolution ``c`` as implicit GEMM; ``finish(idx, v)`` stores
    the biased output element ``v`` at ``idx`` with the group's epilogue; ``source(problem,
    blocking)`` writes the GEMM (default: the C++ packed micro-kernel)."""
    G, m, ncol, kd = conv_gemm_shape(c)
    x, w = c.x, c.w
    cin_g, ksz, osp, isp = x.shape[1] // G, tuple(w.shape[2:]), tuple(c.shape[2:]), \
        tuple(x.shape[2:])
    ct = compute_type(c.dtype)

    def load_a(b, i, kk):
        def emit():
            red = _atoms(k, kk, (cin_g, *ksz), "kw_r")
            oc = k.let(f"{b} * {m} + {i}", "int")
            return w.load(k, [Ix.atom(oc, (0, c.shape[1] - 1)), *red])
        return capture_fragment(k, emit)

    def load_b(b, kk, col):
        def emit():
            # packing B loops over (channel, taps) as kw_kd0, kw_kd1, ... (GemmProblem.k_shape)
            ic, *taps = [Ix.atom(f"kw_kd{d}", (0, s - 1)) for d, s in enumerate((cin_g, *ksz))]
            nn, *pos = _atoms(k, col, (c.shape[0], *osp), "kw_q")
            conds, ipos = [], []
            for d in range(len(osp)):
                raw = k.let(f"{pos[d].render()} * {c.stride[d]} - {c.padding[d]} + "
                            f"{taps[d].render()} * {c.dilation[d]}", "int")
                conds.append(f"{raw} >= 0 && {raw} < {isp[d]}")
                ipos.append(Ix.atom(k.let(f"kw_min(kw_max({raw}, 0), {isp[d] - 1})", "int"),
                                    (0, isp[d] - 1)))
            cin = Ix.atom(k.let(f"{b} * {cin_g} + {ic.render()}", "int"), (0, x.shape[1] - 1))
            v = x.load(k, [nn, cin, *ipos])
            return f"(({' && '.join(conds) or 'true'}) ? {v} : {literal(0, c.dtype)})"
        return capture_fragment(k, emit)

    def store(b, i, col, v):
        def emit():
            nn, *pos = _atoms(k, col, (c.shape[0], *osp), "kw_q")
            oc = Ix.atom(k.let(f"{b} * {m} + {i}", "int"), (0, c.shape[1] - 1))
            val = v
            if c.bias is not None:
                val = k.let(f"{v} + ({ct}){c.bias.load(k, [oc])}", ct)
            finish([nn, oc, *pos], val)
        return capture_fragment(k, emit)[0]

    prob = GemmProblem(G, m, ncol, kd, ct, load_a, load_b, store, a_batched=True,
                       b_batched=True, a_k_contig=True, b_n_contig=False,
                       k_shape=(cin_g, *ksz))
    isa = detect_isa()
    over = {p: int(params[p]) for p in ("mr", "nr", "kc", "mc", "nc") if p in params}
    if ct == "double" and "nr" in over:
        over["nr"] = max(isa.width(ct), over["nr"] // 2)
    bl = replace(default_blocking(isa, ct), **over, threads=str(params.get("threads", "auto")))
    return source(prob, bl)
