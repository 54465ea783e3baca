"""Vectorised arg-reductions (argmax/argmin) for C++ rows: ``V`` lanes, each keeping the first
best value and its position among the elements it sees, then combined with torch's rules
(NaN wins; among equal values the smallest position)."""

from __future__ import annotations

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.index import Ix, linear
from kernelwright.tools.lower.ir import Reduction


def arg_lanes_fit(r: Reduction, lanes: int) -> bool:
    return (lanes > 1 and r.op in ("argmax", "argmin") and r.acc_ctype() in ("float", "double")
            and bool(r.red_sizes) and r.red_sizes[-1] >= lanes)


def _better(r: Reduction, v: str, i: str, acc: str, pos: str, ties: bool) -> str:
    """C condition: ``(v, i)`` replaces ``(acc, pos)``. Lanes see positions in increasing
    order, so only the final combine needs the tie rule."""
    cmp = ">" if r.op == "argmax" else "<"
    cond = f"{v} {cmp} {acc} || ({v} != {v} && {acc} == {acc})"
    if ties:
        cond += f" || (({v} == {acc} || ({v} != {v} && {acc} != {acc})) && {i} < {pos})"
    return cond


def reduce_arg_lanes(k: KernelCtx, r: Reduction, outer: list[Ix], acc: str, pos: str,
                     lanes: int) -> None:
    """Reduce ``r`` for one row into ``acc``/``pos`` (their initial values included)."""
    ct, V = r.acc_ctype(), lanes
    lv, li = k.fresh("lv"), k.fresh("li")
    k.emit(f"{ct} {lv}[{V}];")
    it = k.idx_type  # positions of one row fit the kernel's index type
    k.emit(f"{it} {li}[{V}];")
    k.emit(f"for (int e = 0; e < {V}; ++e) {{ {lv}[e] = {acc}; {li}[e] = ({it}){pos}; }}")
    sizes = r.red_sizes
    opened, rv = [], []
    for s in sizes[:-1]:
        cm = k.loop(k.fresh("r"), s)
        rv.append(cm.__enter__())
        opened.append(cm)
    n = sizes[-1]
    full = n // V * V
    j, e, rj = k.fresh("j"), k.fresh("e"), k.fresh("rj")
    assert r.body is not None

    def element(ix: Ix, into_v: str, into_i: str, select: bool) -> None:
        idx = r.full_index(outer, rv + [ix])
        v = k.let(f"(({ct}){r.body(k, idx)})", ct)
        flat = linear([idx[d] for d in r.red_dims], tuple(sizes)).render()
        f = k.let(f"({it})({flat})", it)
        better = _better(r, v, f, into_v, into_i, False)
        if select:  # selects, not branches: the lane loop vectorises
            c = k.let(f"({better})", "bool")
            k.emit(f"{into_v} = {c} ? {v} : {into_v};")
            k.emit(f"{into_i} = {c} ? {f} : {into_i};")
            return
        with k.block(f"if ({better})"):
            k.emit(f"{into_v} = {v};")
            k.emit(f"{into_i} = {f};")

    with k.block(f"for (int {j} = 0; {j} < {full}; {j} += {V})"):
        if k.simd:
            k.emit("#pragma omp simd")
        with k.block(f"for (int {e} = 0; {e} < {V}; ++{e})"):
            k.emit(f"const int {rj} = {j} + {e};")
            element(Ix.atom(rj, (0, n - 1)), f"{lv}[{e}]", f"{li}[{e}]", True)
    if full < n:
        with k.block(f"for (int {rj} = {full}; {rj} < {n}; ++{rj})"):
            element(Ix.atom(rj, (0, n - 1)), acc, pos, False)
    for cm in reversed(opened):
        cm.__exit__(None, None, None)
    with k.block(f"for (int {e} = 0; {e} < {V}; ++{e})"):
        with k.block(f"if ({_better(r, f'{lv}[{e}]', f'{li}[{e}]', acc, pos, True)})"):
            k.emit(f"{acc} = {lv}[{e}];")
            k.emit(f"{pos} = {li}[{e}];")
