"""The lowering's C++ convolution as implicit GEMM on the packed micro-kernel.

Per group ``g`` (the GEMM batch): ``out[n, g*Cg + i, pos] = sum_kk W[g*Cg + i, kk] *
X_col[kk, (n, pos)]`` with ``kk = (ic, taps)``; the im2col matrix is never stored: packing
B reads the input at ``pos * stride - pad + tap * dilation`` (zero outside), so the
micro-kernel sees the same unit-stride panels as a GEMM. Images fold into the columns
(weights are shared by them). A transposed convolution with stride 1 is the same GEMM
gathered the other way: ``A[i, (ic, taps)] = W[g*Cin_g + ic, i, taps]`` and B reads the input
at ``pos + pad - tap * dilation``; a strided one runs as one GEMM per output phase
(``lowered_convt.py``). Schedule parameter ``g<i>.algo``: ``gemm`` here, ``direct`` the
direct convolution (kept for depthwise and tiny channel counts).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kernelwright.tools.lower.dtypes import compute_type, literal
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.microkernels.isa import detect_isa
from kernelwright.tools.lower.microkernels.lowered import (
    capture_fragment,
    gemm_choices,
    index_atoms,
    input_run,
)
from kernelwright.tools.lower.microkernels.lowered_convt import (
    lowered_conv_phases,
    strided_transposed,
)
from kernelwright.tools.lower.microkernels.packed_gemm import (
    GemmProblem,
    default_blocking,
    fitted_mr,
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
    (depthwise, tiny channel counts). A transposed convolution needs only 4 output channels
    per group: its direct form tests every tap of every output (measured: 8 -> 8 channels,
    3x3x3 stride 2, 172 ms direct, 48 ms as phases). ``mr`` fits the output channels per
    group (:func:`fitted_mr`)."""
    _, m, _, kd = conv_gemm_shape(c)
    mr = fitted_mr(m, default_blocking(detect_isa()).mr, gemm_choices()["mr"])
    if compute_type(c.dtype) not in ("float", "double"):
        return {"algo": "direct", "mr": mr}
    return {"algo": "gemm" if kd >= 64 and m >= (4 if c.transposed else 16) else "direct",
            "mr": mr}


def lowered_conv(k: KernelCtx, c, params: dict[str, Any],
                 finish: Callable[[list[Ix], str], None],
                 source: Callable[..., tuple[str, list[str]]] = gemm_source
                 ) -> tuple[str, list[str]]:
    """``(helpers, body)`` of convolution ``c`` as implicit GEMM; ``finish(idx, v)`` stores
    the biased output element ``v`` at ``idx`` with the group's epilogue; ``source(problem,
    blocking)`` writes the GEMM (default: the C++ packed micro-kernel)."""
    blocking = conv_blocking(params, compute_type(c.dtype))
    if strided_transposed(c):
        return lowered_conv_phases(k, c, blocking, finish, source)
    G, m, ncol, kd = conv_gemm_shape(c)
    x, w = c.x, c.w
    cin_g, ksz, osp, isp = x.shape[1] // G, tuple(w.shape[2:]), tuple(c.shape[2:]), \
        tuple(x.shape[2:])
    ct = compute_type(c.dtype)

    def load_a(b, i, kk):
        def emit():
            red = index_atoms(k, kk, (cin_g, *ksz), "kw_r")
            if c.transposed:  # W is [Cin, Cout_g, taps...]
                ic = k.let(f"{b} * {cin_g} + {red[0].render()}", "int")
                return w.load(k, [Ix.atom(ic, (0, w.shape[0] - 1)),
                                  Ix.atom(k.let(f"{i}", "int"), (0, m - 1)), *red[1:]])
            oc = k.let(f"{b} * {m} + {i}", "int")
            return w.load(k, [Ix.atom(oc, (0, c.shape[1] - 1)), *red])
        return capture_fragment(k, emit)

    def base(d: int, out: Ix) -> str:
        """The column's part of the input position along ``d`` (a tap adds its own)."""
        if c.transposed:  # stride 1 here: strided ones run as phases (lowered_convt)
            return f"{out.render()} + {c.padding[d]}"
        return f"{out.render()} * {c.stride[d]} - {c.padding[d]}"

    def gather(b: str, nn: Ix, bases: list[str], ic: Ix, taps: list[Ix]) -> str:
        """x at image ``nn``, channel ``ic`` of group ``b``, position base + tap (0 outside)."""
        conds, ipos = [], []
        for d in range(len(osp)):
            sign = "-" if c.transposed else "+"
            raw = k.let(f"{bases[d]} {sign} {taps[d].render()} * {c.dilation[d]}", "int")
            conds.append(f"{raw} >= 0 && {raw} < {isp[d]}")
            ipos.append(Ix.atom(k.let(f"kw_min(kw_max({raw}, 0), {isp[d] - 1})", "int"),
                                (0, isp[d] - 1)))
        cin = Ix.atom(k.let(f"{b} * {cin_g} + {ic.render()}", "int"), (0, x.shape[1] - 1))
        v = x.load(k, [nn, cin, *ipos])
        return f"(({' && '.join(conds) or 'true'}) ? {v} : {literal(0, c.dtype)})"

    def k_atoms() -> list[Ix]:
        # packing B loops over (channel, taps) as kw_kd0, kw_kd1, ... (GemmProblem.k_shape)
        return [Ix.atom(f"kw_kd{d}", (0, s - 1)) for d, s in enumerate((cin_g, *ksz))]

    def load_b(b, kk, col):
        def emit():
            ic, *taps = k_atoms()
            nn, *pos = index_atoms(k, col, (c.shape[0], *osp), "kw_q")
            return gather(b, nn, [k.let(base(d, pos[d]), "int") for d in range(len(osp))],
                          ic, taps)
        return capture_fragment(k, emit)

    def columns(col):
        def emit():
            nn, *pos = index_atoms(k, col, (c.shape[0], *osp), "kw_q")
            return [nn.render(), *[k.let(base(d, pos[d]), "int") for d in range(len(osp))]]
        return capture_fragment(k, emit)

    def load_b_cols(b, s):
        def emit():
            ic, *taps = k_atoms()
            nn = Ix.atom(k.let(f"kw_cv0[{s}]", "int"), (0, c.shape[0] - 1))
            bases = [k.let(f"kw_cv{d + 1}[{s}]", "int") for d in range(len(osp))]
            return gather(b, nn, bases, ic, taps)
        return capture_fragment(k, emit)

    nd = len(osp)
    step = 1 if c.transposed else c.stride[-1]  # a column's input base along the row

    def load_b_run(b, s0, count):
        """The run of columns from ``s0``: the same image and outer positions, the last
        one ``step`` apart (module notes of ``packed_gemm``)."""
        def uniform():
            ic, *taps = k_atoms()
            sign = "-" if c.transposed else "+"
            raws = [k.let(f"kw_cv{d + 1}[{s0}] {sign} {taps[d].render()} * {c.dilation[d]}",
                          "int") for d in range(nd)]
            cin = k.let(f"{b} * {cin_g} + {ic.render()}", "int")
            return k.let(f"kw_cv0[{s0}]", "int"), raws, cin

        ustmts, (image, raws, cin) = capture_fragment(k, uniform)
        return input_run(
            k, x, Ix.atom(image, (0, c.shape[0] - 1)), Ix.atom(cin, (0, x.shape[1] - 1)),
            raws, count, step, ct, ustmts)

    def store(b, i, col, v):
        def emit():
            nn, *pos = index_atoms(k, col, (c.shape[0], *osp), "kw_q")
            oc = Ix.atom(k.let(f"{b} * {m} + {i}", "int"), (0, c.shape[1] - 1))
            val = v
            if c.bias is not None:
                val = k.let(f"{v} + ({ct}){c.bias.load(k, [oc])}", ct)
            finish([nn, oc, *pos], val)
        return capture_fragment(k, emit)[0]

    prob = GemmProblem(G, m, ncol, kd, ct, load_a, load_b, store, a_batched=True,
                       b_batched=True, a_k_contig=True, b_n_contig=False,
                       k_shape=(cin_g, *ksz), b_columns=columns, load_b_cols=load_b_cols,
                       b_run=(tuple(range(nd)), nd, step), load_b_run=load_b_run)
    return source(prob, blocking)


def conv_blocking(params: dict[str, Any], ct: str) -> Any:
    """The packed GEMM's blocking from a group's ``mr``, ``nr``, ``kc``, ``mc``, ``nc``,
    ``threads`` (the defaults for what is not there)."""
    isa = detect_isa()
    over = {p: int(params[p]) for p in ("mr", "nr", "kc", "mc", "nc") if p in params}
    if ct == "double" and "nr" in over:
        over["nr"] = max(isa.width(ct), over["nr"] // 2)
    return replace(default_blocking(isa, ct), **over, threads=str(params.get("threads", "auto")))
