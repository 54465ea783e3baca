"""SYCL GEMM, and convolution as implicit GEMM, on a local-memory-tiled, register-blocked kernel.

One work-item per work-group computes one ``mc x nc`` macro-tile of C (on the OpenCL CPU device
a work-group runs on one core's thread, so the work-group *is* the thread). For each ``kc``
block it stages the ``mc x kc`` block of A in ``mr``-row panels and the ``kc x nc`` block of B
in ``nr``-column panels in work-group local memory (``work_group_static``): the staging reads
transposed, batched or computed operands (a convolution's im2col) in their own order, and the
micro-kernel sees unit-stride panels. A convolution's B block is staged row-major instead,
from per-column invariants and runs of the input (``sycl_columns.py``). The micro-kernel
holds ``mr x nr`` outputs in ``sycl::vec<T, vw>`` registers (``mr * nr / vw`` accumulators),
one broadcast of A per row and one vector load of B per ``vw`` columns per k step. The finished
tile goes through the caller's store fragment (bias, activations, residuals: the group's
epilogue) while it is in cache.

Measured on the OpenCL CPU device (AVX2): explicit vectors in a work-group of one ran 3-4x
faster than scalar work-items spread over sub-group lanes (the implicit vectoriser), and a
work-group of 8 or more around vector code ran about 3x slower (it widens every vector op by
the group size); so this kernel's work-group is one work-item and ``vw`` is the tunable SIMD
width.

Schedule parameters (per group): ``algo`` (``packed`` here, ``tile`` the one-tile-per-item
emitter of ``emit/anchor.py``), ``mr``, ``nr`` (rounded up to a multiple of ``vw``), ``vw``,
``kc``, ``mc``, ``nc`` (rounded to the micro-tile; ``kc`` cut so the three local buffers fit
the device's local memory). Every combination is a legal kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kernelwright.tools.lower.backends.sycl_columns import (
    by_columns,
    k_vars,
    stage_b_columns,
    tile_columns,
)
from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.emit.anchor import operand_strides
from kernelwright.tools.lower.emit.common import (
    KernelSource,
    finish_element,
    kernel_info,
    signature,
)
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.microkernels.lowered import gemm_defaults, lowered_gemm
from kernelwright.tools.lower.microkernels.lowered_conv import conv_defaults, lowered_conv
from kernelwright.tools.lower.microkernels.packed_gemm import GemmProblem
from kernelwright.tools.lower.schedule import Group

# the three local buffers (A block, B block, C tile) together stay below this many bytes
# (the device reports 256 KiB of local memory per work-group)
LOCAL_BYTES = 224 * 1024

SYCL_GEMM_CHOICES: dict[str, list[Any]] = {
    "algo": ["packed", "tile"], "mr": [2, 4, 6, 8], "nr": [8, 16, 24, 32], "vw": [4, 8, 16],
    "kc": [64, 128, 256], "mc": [16, 32, 64, 96], "nc": [32, 64, 128, 256]}
SYCL_GEMM_DEFAULTS = {"mr": 4, "nr": 16, "vw": 8, "kc": 128, "mc": 32, "nc": 128}


@dataclass(frozen=True)
class SyclBlocking:
    mr: int = 4
    nr: int = 16
    vw: int = 8
    kc: int = 128
    mc: int = 32
    nc: int = 128
    cores: int = 2


def sycl_gemm_choices() -> dict[str, list[Any]]:
    return {p: list(c) for p, c in SYCL_GEMM_CHOICES.items()}


def sycl_gemm_defaults(g) -> dict[str, Any]:
    """``algo`` as the C++ rule decides (packed from 32^3 multiply-adds, M and N >= 8, float
    or double), the blocking of ``SYCL_GEMM_DEFAULTS``."""
    return {"algo": gemm_defaults(g)["algo"], **SYCL_GEMM_DEFAULTS}


def sycl_conv_defaults(c) -> dict[str, Any]:
    algo = conv_defaults(c)["algo"]
    return {"algo": "gemm" if algo == "gemm" else "direct", **SYCL_GEMM_DEFAULTS}


def uses_sycl_packed(grp: Group, params: dict[str, Any]) -> bool:
    algo = params.get("algo")
    if grp.kind == "gemm":
        return algo == "packed"
    return grp.kind == "conv" and algo == "gemm"


def fit(bl: SyclBlocking, rows: int, cols: int, k: int, nb: int, size: int) -> SyclBlocking:
    """Make any choice legal: ``nr`` a multiple of ``vw``, blocks multiples of the micro-tile
    and no larger than the problem, the local buffers within ``LOCAL_BYTES``, and blocks cut
    while there are fewer than four macro-tiles per core."""
    vw = max(1, bl.vw)
    mr = max(1, bl.mr)
    nr = max(vw, -(-bl.nr // vw) * vw)
    mc = max(mr, min(-(-bl.mc // mr) * mr, -(-rows // mr) * mr))
    nc = max(nr, min(-(-bl.nc // nr) * nr, -(-cols // nr) * nr))
    while nb * -(-rows // mc) * -(-cols // nc) < 4 * bl.cores:
        if nc > 2 * nr:
            nc = -(-(nc // 2) // nr) * nr
        elif mc > 2 * mr:
            mc = -(-(mc // 2) // mr) * mr
        else:
            break
    while mc * nc * size > LOCAL_BYTES // 2 and (mc > mr or nc > nr):
        if nc > nr:
            nc = -(-(nc // 2) // nr) * nr
        else:
            mc = -(-(mc // 2) // mr) * mr
    kc = max(1, min(bl.kc, k))
    while kc > 1 and (mc * kc + kc * nc + mc * nc) * size > LOCAL_BYTES:
        kc //= 2
    return replace(bl, mr=mr, nr=nr, vw=vw, mc=mc, nc=nc, kc=kc)


def _index(fold: str | None, axis: str, var: str, size: int) -> list[str]:
    if fold == axis:
        return [f"const int kw_b = {var} / {size};", f"const int kw_{axis} = {var} % {size};"]
    return [f"const int kw_{axis} = {var};"]


def _stage(p: GemmProblem, fold: str | None, bl: SyclBlocking) -> list[str]:
    """Copy the ``kc`` block of A (``mr``-row panels) and of B (``nr``-column panels) into
    local memory, zero past the edges."""
    mr, nr, ct = bl.mr, bl.nr, p.ctype
    sa, va = p.load_a("kw_b", "kw_m", "kw_k")
    sb, vb = p.load_b("kw_b", "kw_k", "kw_n")
    a_elem = ["{", *_index(fold, "m", "kw_row", p.m),
              *([] if fold == "m" else ["const int kw_b = kw_tb;"]),
              "const int kw_k = kw_pc + kw_kk;", *sa,
              f"kw_la[kw_ip * {mr} * kw_kcv + kw_kk * {mr} + kw_r] = ({ct})({va});", "}"]
    b_elem = ["{", *_index(fold, "n", "kw_col", p.n),
              *([] if fold == "n" else ["const int kw_b = kw_tb;"]),
              "const int kw_k = kw_pc + kw_kk;", *k_vars(p), *sb,
              f"kw_lb[kw_jr * {nr} * kw_kcv + kw_kk * {nr} + kw_s] = ({ct})({vb});", "}"]
    inner_r = [f"for (int kw_r = 0; kw_r < {mr}; ++kw_r) {{",
               f"const int kw_row = kw_i0 + kw_ip * {mr} + kw_r;",
               "if (kw_row >= kw_rows) {",
               f"kw_la[kw_ip * {mr} * kw_kcv + kw_kk * {mr} + kw_r] = 0; continue; }}",
               *a_elem, "}"]
    if p.a_k_contig:  # rows outer, k inner: A read along its rows
        stage_a = ["for (int kw_ip = 0; kw_ip < kw_mp; ++kw_ip)",
                   f"for (int kw_r = 0; kw_r < {mr}; ++kw_r) {{",
                   f"const int kw_row = kw_i0 + kw_ip * {mr} + kw_r;",
                   "for (int kw_kk = 0; kw_kk < kw_kcv; ++kw_kk) {",
                   "if (kw_row >= kw_rows) {",
                   f"kw_la[kw_ip * {mr} * kw_kcv + kw_kk * {mr} + kw_r] = 0; continue; }}",
                   *a_elem, "}", "}"]
    else:
        stage_a = ["for (int kw_ip = 0; kw_ip < kw_mp; ++kw_ip)",
                   "for (int kw_kk = 0; kw_kk < kw_kcv; ++kw_kk)", *inner_r]
    if by_columns(p, fold):
        return stage_a + stage_b_columns(p, bl.nc)
    col_guard = ["if (kw_col >= kw_cols) {",
                 f"kw_lb[kw_jr * {nr} * kw_kcv + kw_kk * {nr} + kw_s] = 0; continue; }}"]
    if p.b_n_contig:  # k outer, columns inner: B read along its rows
        stage_b = ["for (int kw_jr = 0; kw_jr < kw_npn; ++kw_jr)",
                   "for (int kw_kk = 0; kw_kk < kw_kcv; ++kw_kk)",
                   f"for (int kw_s = 0; kw_s < {nr}; ++kw_s) {{",
                   f"const int kw_col = kw_j0 + kw_jr * {nr} + kw_s;", *col_guard, *b_elem, "}"]
    else:
        stage_b = ["for (int kw_jr = 0; kw_jr < kw_npn; ++kw_jr)",
                   f"for (int kw_s = 0; kw_s < {nr}; ++kw_s) {{",
                   f"const int kw_col = kw_j0 + kw_jr * {nr} + kw_s;",
                   "for (int kw_kk = 0; kw_kk < kw_kcv; ++kw_kk) {", *col_guard, *b_elem,
                   "}", "}"]
    return stage_a + stage_b


def _micro(p: GemmProblem, bl: SyclBlocking, b_rows: bool) -> list[str]:
    """The register tile: ``mr x nr`` outputs in ``mr * nr / vw`` vectors, accumulated over
    the staged block into the local C tile."""
    mr, nr, vw, ct = bl.mr, bl.nr, bl.vw, p.ctype
    vt = f"sycl::vec<{ct}, {vw}>"
    nv = nr // vw
    ldb = bl.nc if b_rows else nr
    out = ["for (int kw_jr = 0; kw_jr < kw_npn; ++kw_jr)",
           "for (int kw_ip = 0; kw_ip < kw_mp; ++kw_ip) {",
           f"const {ct}* __restrict__ kw_pa = kw_la + kw_ip * {mr} * kw_kcv;",
           f"const {ct}* __restrict__ kw_pb = kw_lb + kw_jr * {nr}"
           f"{'' if b_rows else ' * kw_kcv'};",
           f"{ct}* kw_pcx = kw_lc + kw_ip * {mr} * {bl.nc} + kw_jr * {nr};"]
    for r in range(mr):
        for v in range(nv):
            out.append(f"{vt} kw_c{r}_{v}(0);")
            off = r * bl.nc + v * vw
            out.append(f"if (kw_pc > 0) __builtin_memcpy(&kw_c{r}_{v}, kw_pcx + {off}, "
                       f"sizeof({vt}));")
    out.append("for (int kw_kk = 0; kw_kk < kw_kcv; ++kw_kk) {")
    for v in range(nv):
        out.append(f"{vt} kw_b{v}; __builtin_memcpy(&kw_b{v}, kw_pb + kw_kk * {ldb} + {v * vw}, "
                   f"sizeof({vt}));")
    for r in range(mr):
        out.append(f"const {vt} kw_a{r}(kw_pa[kw_kk * {mr} + {r}]);")
        for v in range(nv):
            out.append(f"kw_c{r}_{v} = sycl::fma(kw_a{r}, kw_b{v}, kw_c{r}_{v});")
    out.append("}")
    for r in range(mr):
        for v in range(nv):
            out.append(f"__builtin_memcpy(kw_pcx + {r * bl.nc + v * vw}, &kw_c{r}_{v}, "
                       f"sizeof({vt}));")
    out.append("}")
    return out


def _store(p: GemmProblem, fold: str | None, bl: SyclBlocking) -> list[str]:
    stmts = p.store("kw_b", "kw_m", "kw_n", "kw_v")
    m_ix = _index(fold, "m", "kw_row", p.m) if fold == "m" else ["const int kw_m = kw_row;"]
    n_ix = _index(fold, "n", "kw_col", p.n) if fold == "n" else ["const int kw_n = kw_col;"]
    rows = [f"for (int kw_i = 0; kw_i < {bl.mc}; ++kw_i) {{",
            "const int kw_row = kw_i0 + kw_i;", "if (kw_row >= kw_rows) break;", *m_ix]
    cols = [f"for (int kw_j = 0; kw_j < {bl.nc}; ++kw_j) {{",
            "const int kw_col = kw_j0 + kw_j;", "if (kw_col >= kw_cols) break;", *n_ix]
    elem = [*([] if fold else ["const int kw_b = kw_tb;"]),
            f"const {p.ctype} kw_v = kw_lc[kw_i * {bl.nc} + kw_j];", "{", *stmts, "}", "}", "}"]
    # a convolution's column is an image and a position (divisions): split once per column
    return [*cols, *rows, *elem] if by_columns(p, fold) else [*rows, *cols, *elem]


def sycl_gemm_body(p: GemmProblem, bl: SyclBlocking, size: int) -> tuple[list[str], int]:
    """The kernel body (reads ``kw_t``, the work-item's macro-tile) and the number of tiles."""
    fold = None
    if p.batch > 1 and not p.b_batched:
        fold = "m"
    elif p.batch > 1 and not p.a_batched:
        fold = "n"
    rows = p.m * (p.batch if fold == "m" else 1)
    cols = p.n * (p.batch if fold == "n" else 1)
    nb = 1 if fold else p.batch
    bl = fit(bl, rows, cols, p.k, nb, size)
    mr, nr, kc, mc, nc, ct = bl.mr, bl.nr, bl.kc, bl.mc, bl.nc, p.ctype
    mt, nt = -(-rows // mc), -(-cols // nc)
    kn = [f"const int kw_kn = {p.k};"]
    if p.k_empty is not None and fold is None:  # a batch whose K is all zeros: no product
        estmts, empty = p.k_empty("kw_tb")
        kn = ["int kw_kn;", "{", *estmts, f"kw_kn = ({empty}) ? 0 : {p.k};", "}"]
    body = [
        f"/* SYCL packed GEMM {p.batch}x{p.m}x{p.n}x{p.k} ({ct}): micro-tile {mr}x{nr} on "
        f"vec<{ct}, {bl.vw}>, kc {kc}, mc {mc}, nc {nc}, fold {fold}; one work-item per "
        "work-group, blocks staged in local memory */",
        f"static syclexp::work_group_static<{ct}[{mc * kc}]> kw_sa;",
        f"static syclexp::work_group_static<{ct}[{kc * nc}]> kw_sb;",
        f"static syclexp::work_group_static<{ct}[{mc * nc}]> kw_sc;",
        f"{ct}* __restrict__ kw_la = &kw_sa[0];",
        f"{ct}* __restrict__ kw_lb = &kw_sb[0];",
        f"{ct}* __restrict__ kw_lc = &kw_sc[0];",
        f"const int kw_rows = {rows}, kw_cols = {cols};",
        f"const int kw_tb = kw_t / {mt * nt};",
        f"const int kw_i0 = kw_t / {nt} % {mt} * {mc};",
        f"const int kw_j0 = kw_t % {nt} * {nc};",
        f"const int kw_mp = (kw_i0 + {mc} <= kw_rows ? {mc} : kw_rows - kw_i0 + {mr - 1})"
        f" / {mr};",
        f"const int kw_npn = (kw_j0 + {nc} <= kw_cols ? {nc} : kw_cols - kw_j0 + {nr - 1})"
        f" / {nr};",
        "(void)kw_tb;",
        *(tile_columns(p, bl.nc) if by_columns(p, fold) else []),
        *kn,
        f"for (int kw_pc = 0; kw_pc < kw_kn; kw_pc += {kc}) {{",
        f"const int kw_kcv = kw_pc + {kc} <= {p.k} ? {kc} : {p.k} - kw_pc;",
        *_stage(p, fold, bl), *_micro(p, bl, by_columns(p, fold)), "}",
        f"if (kw_kn == 0) for (int kw_i = 0; kw_i < {mc * nc}; ++kw_i) kw_lc[kw_i] = 0;",
        *_store(p, fold, bl)]
    return body, nb * mt * nt


def packed_gemm_sycl(k: KernelCtx, grp: Group, names: dict[int, str],
                     params: dict[str, Any]) -> KernelSource:
    """The whole SYCL kernel of a GEMM or (implicit-GEMM) convolution group."""
    g = grp.main[0]
    size = 8 if "double" in str(g.dtype) else 4
    bl = SyclBlocking(**{p: int(params[p]) for p in ("mr", "nr", "vw", "kc", "mc", "nc")
                         if p in params})
    tiles: list[int] = []

    def source(prob: GemmProblem, _cpu_blocking) -> tuple[str, list[str]]:
        body, n = sycl_gemm_body(prob, bl, size)
        tiles.append(n)
        return "", body

    def finish(idx: list[Ix], v: str) -> None:
        finish_element(k, grp, names, idx, v)

    # the fragments' own nr override (double halves it) is ignored: the SYCL blocking is ours
    _, body = (lowered_conv(k, g, {}, finish, source=source) if grp.kind == "conv"
               else lowered_gemm(k, g, {}, finish, operand_strides, source=source))
    args, decl = signature(k)
    text = (f'extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))\n'
            f"void {grp.name}({decl}) {{\n"
            "    auto it = sycl::ext::oneapi::this_work_item::get_nd_item<1>();\n"
            f"    const int kw_t = it.get_global_id(0);\n    if (kw_t >= {tiles[0]}) return;\n"
            + "\n".join(body) + "\n}\n")
    return KernelSource(grp.name, text, args, tiles[0], 1, info=kernel_info(grp, k))
