"""The C++ GEMM emitter: register tiles whose columns are an OpenMP simd loop.

``gemm_body_cpp`` is the one entry point ``CppCodegen.emit_gemm`` calls; a faster
micro-kernel replaces it there.
"""

from __future__ import annotations

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dtypes import compute_type, literal
from kernelwright.tools.lower.emit.anchor import gemm_tiles, operand_strides
from kernelwright.tools.lower.emit.common import finish_element
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.ir import Gemm
from kernelwright.tools.lower.schedule import Group


def gemm_body_cpp(k: KernelCtx, grp: Group, names: dict[int, str], unit: str, rm: int,
                  rn: int, form: str) -> int:
    """C++ GEMM tile: ``rm`` rows x ``rn`` columns of C per unit (an OpenMP iteration).

    ``nvec``: for each k, C[r, :] += A[r, k] * B[k, :] with the ``rn`` columns an OpenMP simd
    loop (contiguous when B is stored K x N); the last column tile clamps its loads.
    ``kdot``: rm x rn dot products along k, one simd reduction (A and B both stored along
    k, e.g. nn.Linear's N x K weight). ``auto`` picks from the operands' strides.
    """
    g: Gemm = grp.main[0]  # type: ignore[assignment]
    assert g.a is not None and g.b is not None
    ct = compute_type(g.dtype)
    if form == "auto":
        kv = Ix.var("kw_probe_k", g.kdim)
        nv = Ix.var("kw_probe_n", g.n)
        zero = [Ix.c(0)] * len(g.batch)
        bs = operand_strides(k, g.b, zero + [kv, nv])
        as_ = operand_strides(k, g.a, zero + [Ix.c(0), kv])
        kdot = (bs.get("kw_probe_n") != 1 and bs.get("kw_probe_k") == 1
                and as_.get("kw_probe_k") == 1)
        form = "kdot" if kdot else "nvec"
    if form == "kdot":
        rn = min(rn, 4)
        rm = min(rm, 4)
    rm, rn = max(1, min(rm, g.m)), max(1, min(rn, g.n))
    batch, units = gemm_tiles(k, g, unit, rm, rn, rows_fastest=True)
    rows = [k.let(f"kw_min(m0 + {r}, {g.m - 1})", "int") for r in range(rm)]
    row_ix = [Ix.atom(rw, (0, g.m - 1)) for rw in rows]
    zero = literal(0, g.dtype)
    if form == "kdot":
        cols = [k.let(f"kw_min(n0 + {s}, {g.n - 1})", "int") for s in range(rn)]
        col_ix = [Ix.atom(c, (0, g.n - 1)) for c in cols]
        acc = [[k.var(ct, zero, "acc") for _ in range(rn)] for _ in range(rm)]
        flat = ",".join(a for row in acc for a in row)
        k.emit(f"#pragma omp simd reduction(+:{flat})")
        with k.loop("kk", g.kdim) as kk:
            av = [g.a(k, batch + [row_ix[r], kk]) for r in range(rm)]
            bv = [g.b(k, batch + [kk, col_ix[s]]) for s in range(rn)]
            for r in range(rm):
                for s in range(rn):
                    k.emit(f"{acc[r][s]} += {av[r]} * {bv[s]};")
        init = ", ".join("{" + ", ".join(row) + "}" for row in acc)
        k.emit(f"{ct} acc[{rm}][{rn}] = {{{init}}};")
    else:
        k.emit(f"{ct} acc[{rm}][{rn}];")
        with k.block(f"for (int r = 0; r < {rm}; ++r)"):
            k.emit("#pragma omp simd")
            with k.block(f"for (int s = 0; s < {rn}; ++s)"):
                k.emit(f"acc[r][s] = {zero};")

        def tile(col: str) -> None:
            with k.loop("kk", g.kdim) as kk:
                av = [g.a(k, batch + [row_ix[r], kk]) for r in range(rm)]
                k.emit("#pragma omp simd")
                with k.block(f"for (int s = 0; s < {rn}; ++s)"):
                    # one atom with the column's exact range keeps index maps simple
                    k.emit(f"const int nc = {col};")
                    b = g.b(k, batch + [kk, Ix.atom("nc", (0, g.n - 1))])
                    for r in range(rm):
                        k.emit(f"acc[{r}][s] += {av[r]} * {b};")

        if g.n % rn == 0:
            tile("n0 + s")
        else:
            with k.block(f"if (n0 + {rn} <= {g.n})"):
                tile("n0 + s")
            with k.block("else"):
                tile(f"kw_min(n0 + s, {g.n - 1})")
    with k.block(f"for (int r = 0; r < {rm}; ++r)"):
        with k.block(f"if (m0 + r < {g.m})"):
            with k.block(f"for (int s = 0; s < {rn}; ++s)"):
                with k.block(f"if (n0 + s < {g.n})"):
                    k.emit("const int mi = m0 + r;")
                    k.emit("const int ni = n0 + s;")
                    idx = batch + [Ix.atom("mi", (0, g.m - 1)), Ix.atom("ni", (0, g.n - 1))]
                    finish_element(k, grp, names, idx, k.let("acc[r][s]", ct))
    return units
