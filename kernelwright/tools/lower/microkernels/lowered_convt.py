"""A strided transposed convolution as implicit GEMM without the zeros: one GEMM per output
phase (the sub-pixel decomposition).

Along a dimension with stride ``s``, padding ``p`` and dilation ``dl``, output position
``o = r + s*q`` (phase ``r < s``) takes input ``i = q + (r + p - t*dl) / s`` from exactly the
taps ``t`` with ``(r + p - t*dl) % s == 0``: for a given phase those taps are ``t0(r) + j*step``
(``step = s / gcd(dl, s)``), the same few for every ``q``. So each phase is an ordinary
convolution with a subset of the taps, and the phases are the batch of one GEMM: ``batch =
groups x prod(s)``, ``M = Cout / groups``, ``N = images x prod(ceil(out / s))``, ``K = Cin /
groups x prod(max taps of a phase)``. The plain gather (``lowered_conv``) multiplies all but 1
in ``s^d`` of B's entries as zeros; here only the padding of short phases is zero. Columns
past the output's edge (``r + s*q >= out``) are computed and not stored.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kernelwright.tools.lower.dtypes import compute_type, literal
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.microkernels.lowered import (
    capture_fragment,
    index_atoms,
    input_run,
)
from kernelwright.tools.lower.microkernels.packed_gemm import GemmProblem

if TYPE_CHECKING:
    from kernelwright.tools.lower.codegen import KernelCtx


def phase_taps(ksz: int, s: int, p: int, dl: int) -> tuple[list[int], int, int]:
    """``(first, step, count)``: per phase ``r < s`` its first tap (-1: none reaches it), the
    step between its taps, and the most taps any phase has (at least 1)."""
    step = s // math.gcd(dl, s)
    first, count = [], 1
    for r in range(s):
        taps = [t for t in range(ksz) if (r + p - t * dl) % s == 0]
        first.append(taps[0] if taps else -1)
        count = max(count, len(taps))
    return first, step, count


def strided_transposed(c) -> bool:
    """Whether ``c`` is a transposed convolution with a stride above 1 (the phase form)."""
    return bool(c.transposed) and any(s > 1 for s in c.stride)


def lowered_conv_phases(k: KernelCtx, c, blocking: Any,
                        finish: Callable[[list[Ix], str], None],
                        source: Callable[..., tuple[str, list[str]]]) -> tuple[str, list[str]]:
    """``(helpers, body)`` of strided transposed convolution ``c`` (see the module notes);
    ``finish``, ``source`` as for :func:`lowered_conv`, ``blocking`` already chosen."""
    x, w = c.x, c.w
    G, nd = c.groups, len(c.shape) - 2
    cin_g, m = x.shape[1] // G, c.shape[1] // G
    ksz, osp, isp = tuple(w.shape[2:]), tuple(c.shape[2:]), tuple(x.shape[2:])
    S = tuple(c.stride)
    dims = [phase_taps(ksz[d], S[d], c.padding[d], c.dilation[d]) for d in range(nd)]
    T = tuple(count for _, _, count in dims)
    Q = tuple(-(-osp[d] // S[d]) for d in range(nd))
    N = c.shape[0]
    ct = compute_type(c.dtype)
    zero = literal(0, c.dtype)

    def phase(b: str) -> tuple[Ix, list[Ix]]:
        g, *rs = index_atoms(k, b, (G, *S), "kw_ph")
        return g, rs

    def tap(d: int, r: Ix, j: Ix) -> tuple[str, str]:
        """(tap ``j`` of phase ``r`` along ``d``, whether it exists)."""
        first, step, _ = dims[d]
        chain = str(first[-1])
        for rv in range(len(first) - 2, -1, -1):
            chain = f"({r.render()} == {rv} ? {first[rv]} : {chain})"
        t0 = k.let(chain, "int")
        t = k.let(f"{t0} + {j.render()} * {step}", "int")
        return t, f"{t0} >= 0 && {t} < {ksz[d]}"

    def load_a(b, i, kk):
        def emit():
            g, rs = phase(b)
            ic, *js = index_atoms(k, kk, (cin_g, *T), "kw_r")
            taps, conds = [], []
            for d in range(nd):
                t, cond = tap(d, rs[d], js[d])
                conds.append(cond)
                taps.append(Ix.atom(k.let(f"kw_min(kw_max({t}, 0), {ksz[d] - 1})", "int"),
                                    (0, ksz[d] - 1)))
            cin = k.let(f"{g.render()} * {cin_g} + {ic.render()}", "int")
            v = w.load(k, [Ix.atom(cin, (0, w.shape[0] - 1)),
                           Ix.atom(k.let(f"{i}", "int"), (0, m - 1)), *taps])
            return f"(({' && '.join(conds)}) ? {v} : {zero})"
        return capture_fragment(k, emit)

    def sources(b: str, qs: list[str]) -> tuple[Ix, list[str], list[str]]:
        """Input channel, raw input positions and tap conditions of B's row at the packing's
        ``kw_kd*`` (channel, phase taps) for column positions ``qs``."""
        g, rs = phase(b)
        ic, *js = [Ix.atom(f"kw_kd{d}", (0, s - 1)) for d, s in enumerate((cin_g, *T))]
        raws, conds = [], []
        for d in range(nd):
            t, cond = tap(d, rs[d], js[d])
            raws.append(k.let(f"{qs[d]} + ({rs[d].render()} + {c.padding[d]} - {t} * "
                              f"{c.dilation[d]}) / {S[d]}", "int"))
            conds.append(cond)
        cin = Ix.atom(k.let(f"{g.render()} * {cin_g} + {ic.render()}", "int"),
                      (0, x.shape[1] - 1))
        return cin, raws, conds

    def gather(nn: Ix, cin: Ix, raws: list[str], conds: list[str]) -> str:
        ipos = [Ix.atom(k.let(f"kw_min(kw_max({r}, 0), {isp[d] - 1})", "int"), (0, isp[d] - 1))
                for d, r in enumerate(raws)]
        inside = [f"{r} >= 0 && {r} < {isp[d]}" for d, r in enumerate(raws)]
        return f"(({' && '.join(conds + inside)}) ? {x.load(k, [nn, cin, *ipos])} : {zero})"

    def load_b(b, kk, col):
        def emit():
            nn, *qs = index_atoms(k, col, (N, *Q), "kw_q")
            return gather(nn, *sources(b, [q.render() for q in qs]))
        return capture_fragment(k, emit)

    def columns(col):
        return capture_fragment(k, lambda: [q.render() for q in index_atoms(
            k, col, (N, *Q), "kw_q")])

    def load_b_cols(b, s):
        def emit():
            nn = Ix.atom(k.let(f"kw_cv0[{s}]", "int"), (0, N - 1))
            return gather(nn, *sources(b, [k.let(f"kw_cv{d + 1}[{s}]", "int")
                                           for d in range(nd)]))
        return capture_fragment(k, emit)

    def load_b_run(b, s0, count):
        """A run of columns from ``s0``: one image, one phase, consecutive ``q`` along the
        last dim, so consecutive inputs (``packed_gemm``'s ``b_run``)."""
        def uniform():
            cin, raws, conds = sources(b, [k.let(f"kw_cv{d + 1}[{s0}]", "int")
                                           for d in range(nd)])
            return k.let(f"kw_cv0[{s0}]", "int"), cin, raws, conds

        ustmts, (image, cin, raws, conds) = capture_fragment(k, uniform)
        return input_run(k, x, Ix.atom(image, (0, N - 1)), cin, raws, count, 1, ct, ustmts,
                         tuple(conds))

    def store(b, i, col, v):
        def emit():
            g, rs = phase(b)
            nn, *qs = index_atoms(k, col, (N, *Q), "kw_q")
            outs = [k.let(f"{rs[d].render()} + {S[d]} * {qs[d].render()}", "int")
                    for d in range(nd)]
            oc = Ix.atom(k.let(f"{g.render()} * {m} + {i}", "int"), (0, c.shape[1] - 1))
            inside = " && ".join(f"{o} < {osp[d]}" for d, o in enumerate(outs))
            with k.block(f"if ({inside})"):
                val = v
                if c.bias is not None:
                    val = k.let(f"{v} + ({ct}){c.bias.load(k, [oc])}", ct)
                finish([nn, oc, *[Ix.atom(o, (0, osp[d] - 1)) for d, o in enumerate(outs)]],
                       val)
        return capture_fragment(k, emit)[0]

    def k_empty(b):
        def emit():
            _, rs = phase(b)
            return " || ".join(f"{rs[d].render()} == {r}" for d in range(nd)
                               for r, t0 in enumerate(dims[d][0]) if t0 < 0)
        return capture_fragment(k, emit)

    empty = any(t0 < 0 for first, _, _ in dims for t0 in first)
    prob = GemmProblem(G * math.prod(S), m, N * math.prod(Q), cin_g * math.prod(T), ct,
                       load_a, load_b, store, a_batched=True, b_batched=True,
                       a_k_contig=True, b_n_contig=False, k_shape=(cin_g, *T),
                       b_columns=columns, load_b_cols=load_b_cols,
                       b_run=(tuple(range(nd)), nd, 1), load_b_run=load_b_run,
                       k_empty=k_empty if empty else None)
    return source(prob, blocking)
