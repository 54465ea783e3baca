"""Staging a convolution's B block (the im2col) for the SYCL packed GEMM without a division
per element.

A convolution's B column is an image and an output position; each k row is an input channel
and a tap. The column's part (``GemmProblem.b_columns``: the image and the input base) is
computed once per macro-tile into ``kw_cv<j>[s]``, the row's part once per k row. B is staged
row-major (``kw_lb[kk * nc + s]``; the micro-kernel reads its panels ``nc`` apart), so the
tile's columns cut into runs (``GemmProblem.b_run``: same image and outer positions, the last
input position ``step`` apart) are one piece each: a run inside the input is a plain copy
(contiguous at step 1), one touching the padding has zeros at its ends, and a tile of short
runs (rows narrower than ``MIN_RUN`` columns on average) reads each element through the
arrays instead.

Measured (in-process, a 3x3 convolution 8 -> 16 channels over 8 128x128 images, KernelBench
level 2 #69 scaled for a CPU): per-element staging 13.0 ms, through the arrays 8.1 ms, with
runs and the column-outer store 4.0 ms (eager 2.5-3.7 ms).
"""

from __future__ import annotations

import math

from kernelwright.tools.lower.microkernels.packed_gemm import GemmProblem
from kernelwright.tools.lower.microkernels.packed_runs import run_joined, run_piece

# runs are used where a tile's pieces average at least this many columns
MIN_RUN = 4


def by_columns(p: GemmProblem, fold: str | None) -> bool:
    """Whether B is staged from per-column invariants (a convolution), which needs its
    columns unfolded (``fold`` is not ``n``)."""
    return bool(p.b_columns and p.load_b_cols and p.k_shape) and fold != "n"


def k_vars(p: GemmProblem) -> list[str]:
    """``kw_kd0, kw_kd1, ...`` of ``kw_k`` over ``p.k_shape`` (a convolution's channel, taps)."""
    if not p.k_shape:
        return []
    out = []
    for d, size in enumerate(p.k_shape):
        inner = math.prod(p.k_shape[d + 1:])
        out.append(f"const int kw_kd{d} = kw_k / {inner} % {size};")
    return out


def tile_columns(p: GemmProblem, nc: int) -> list[str]:
    """``kw_cv<j>[s]`` for the tile's ``nc`` columns (past the last column: column 0's), and
    where runs apply, their cuts ``kw_cut[0..kw_nrun]`` (``kw_nrun`` is -1 where not)."""
    cstmts, cvals = p.b_columns("kw_col")
    out = [*[f"int kw_cv{j}[{nc}];" for j in range(len(cvals))],
           f"const int kw_ncv = kw_j0 + {nc} <= kw_cols ? {nc} : kw_cols - kw_j0;",
           f"for (int kw_s = 0; kw_s < {nc}; ++kw_s) {{",
           "const int kw_col = kw_s < kw_ncv ? kw_j0 + kw_s : 0;", "{", *cstmts,
           *[f"kw_cv{j}[kw_s] = {v};" for j, v in enumerate(cvals)], "}", "}"]
    if p.b_run is None or p.load_b_run is None:
        return [*out, "const int kw_nrun = -1;"]
    joined = run_joined(p)
    return [*out, f"int kw_cut[{nc + 1}];", "int kw_nrun = 0;", "kw_cut[0] = 0;",
            "for (int kw_s = 1; kw_s < kw_ncv; ++kw_s) {",
            f"if ({joined}) continue;", "kw_cut[++kw_nrun] = kw_s;", "}",
            "kw_cut[++kw_nrun] = kw_ncv;",
            f"if (kw_nrun * {MIN_RUN} > kw_ncv) kw_nrun = -1;"]


def stage_b_columns(p: GemmProblem, nc: int) -> list[str]:
    """The ``kc`` block of B a k row at a time: the row's (channel, taps) split once, then
    the tile's run pieces copied (or, without runs, each column read through ``kw_cv``)."""
    ct = p.ctype
    bstmts, bval = p.load_b_cols("kw_b", "kw_s")
    dst = f"kw_lb[kw_kk * {nc} + kw_s]"
    gather = [f"for (int kw_s = 0; kw_s < {nc}; ++kw_s) {{", "{", *bstmts,
              f"{dst} = kw_s < kw_ncv ? ({ct})({bval}) : ({ct})0;", "}", "}"]
    return ["for (int kw_kk = 0; kw_kk < kw_kcv; ++kw_kk) {",
            "const int kw_k = kw_pc + kw_kk;", *k_vars(p), "const int kw_b = kw_tb;",
            "(void)kw_b;", *(_runs(p, nc) if p.b_run and p.load_b_run else []),
            "{", *gather, "}", "}"]


def _runs(p: GemmProblem, nc: int) -> list[str]:
    """The k row's run pieces (``kw_nrun >= 0``), then ``continue`` past the gather."""
    ct = p.ctype
    run = p.load_b_run("kw_b", "kw_s0", "kw_s1 - kw_s0")
    if run.first is not None:  # consecutive elements of one buffer
        interior = ["{", *run.first_stmts, f"const {ct}* kw_src = &{run.first};",
                    "for (int kw_l = kw_lo; kw_l < kw_hi; ++kw_l) "
                    "kw_d[kw_l] = kw_src[kw_l - kw_lo];", "}"]
    else:
        interior = ["for (int kw_l = kw_lo; kw_l < kw_hi; ++kw_l) {", *run.lane_stmts,
                    f"kw_d[kw_l] = ({ct})({run.lane_value});", "}"]

    def zeros(start: str, stop: str) -> str:
        return f"for (int kw_l = {start}; kw_l < {stop}; ++kw_l) kw_d[kw_l] = ({ct})0;"

    return ["if (kw_nrun >= 0) {",
            "for (int kw_g = 0; kw_g < kw_nrun; ++kw_g) {",
            "const int kw_s0 = kw_cut[kw_g], kw_s1 = kw_cut[kw_g + 1];",
            f"{ct}* kw_d = kw_lb + kw_kk * {nc} + kw_s0;",
            *run_piece(run, interior, zeros), "}",
            f"for (int kw_s = kw_ncv; kw_s < {nc}; ++kw_s) kw_lb[kw_kk * {nc} + kw_s] = ({ct})0;",
            "continue;", "}"]
