"""A BLIS-style GEMM as C++ text: blocks of ``kc`` x ``mc`` x ``nc``, packed panels, the
register-tiled micro-kernel, OpenMP over macro-tiles, the epilogue in the tile's store.

``C[b, i, j] = sum_k A[b, i, k] * B[b, k, j]`` for ``b < batch``. The operands and the store
are C++ fragments the caller writes (:class:`GemmProblem`), so transposed, strided, broadcast
or computed operands (a convolution's im2col) cost only in the packing, which reads each
source in its contiguous order; the micro-kernel sees unit-stride panels.

Loop nest (every thread): pack all of B once into ``NR``-column panels (``omp for``), then
``omp for`` over macro-tiles ``(b, ic, jc)`` of ``mc x nc``; per tile, for each ``kc`` block,
pack the ``mc x kc`` block of A into ``MR``-row panels and run the micro-kernel over its
``MR x NR`` tiles into a per-thread ``mc x nc`` accumulator; after the last ``kc`` block each
micro-tile goes straight (hot in L1) through the caller's store.

When every row fits one ``mc`` block and K is short (a convolution's im2col: few output
channels, many columns), each B column block is used by one tile only: the tile packs its own
``K x nc`` block (``nc`` cut to keep it in L2) right before using it, instead of all of B
going out to memory and back (16 MB for a 32-channel 3x3 convolution over 16 32x32 images).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from kernelwright.tools.lower.microkernels.isa import Isa
from kernelwright.tools.lower.microkernels.packed_runs import PackedRun, pack_b_runs
from kernelwright.tools.lower.microkernels.ukernel import COMMON, ukernel_name, ukernel_source

# (statements, value expression) for an element; names are C++ int variables
Load = Callable[[str, str, str], tuple[list[str], str]]
Store = Callable[[str, str, str, str], list[str]]

# below this many multiply-adds one thread runs the GEMM (waking the team costs more)
TEAM_MIN_FMAS = 1 << 20
# a tile packs its own B block (module notes) when K is at most this, in at most this many bytes
TILE_B_MAX_K = 2048
TILE_B_BYTES = 256 * 1024


@dataclass(frozen=True)
class GemmProblem:
    """What to multiply. ``load_a(b, i, k)``, ``load_b(b, k, j)``: statements and the value;
    ``store(b, i, j, v)``: statements that consume the finished ``v`` (epilogue included).

    ``a_batched`` / ``b_batched`` False: that operand ignores ``b`` (a shared weight); the
    batch is then folded into the other operand's dimension (one bigger GEMM). ``a_k_contig``:
    A's source is contiguous along k (row-major); ``b_n_contig``: B's along n. They choose
    the packing loop order, never the result.
    """

    batch: int
    m: int
    n: int
    k: int
    ctype: str
    load_a: Load
    load_b: Load
    store: Store
    a_batched: bool = True
    b_batched: bool = True
    a_k_contig: bool = True
    b_n_contig: bool = True
    # B packed column by column with k as nested loops over this shape (variables kw_kd0...,
    # visible to load_b): a convolution's (channel, taps) without a division per element
    k_shape: tuple[int, ...] | None = None
    # with k_shape: B's per-column invariants, computed once per panel. ``b_columns(col)``:
    # statements and int expressions, kept in ``kw_cv<j>[s]`` for each column s of the panel;
    # ``load_b_cols(b, s)`` reads them. Packing then runs a simd loop over the panel's columns
    # inside the k loops (contiguous stores, one gather per column), not a column at a time
    b_columns: Callable[[str], tuple[list[str], list[str]]] | None = None
    load_b_cols: Callable[[str, str], tuple[list[str], str]] | None = None
    # with b_columns: ``b_run = (same, stepping, step)`` says when consecutive columns are one
    # run of the source: ``kw_cv<j>`` equal for each j in ``same``, ``kw_cv<stepping>`` growing
    # by ``step`` (a convolution's columns along an output row). A panel cut into a few runs
    # packs each run as ``load_b_run(b, s0, n)`` describes it (run from column ``s0``, ``n``
    # long; :class:`PackedRun`): zeros outside the source, plain loads inside
    b_run: tuple[tuple[int, ...], int, int] | None = None
    load_b_run: Callable[[str, str, str], PackedRun] | None = None
    # ``k_empty(b)``: statements and a condition under which batch ``b``'s whole K is zeros
    # (a transposed convolution's phase that no tap reaches): its product is skipped
    k_empty: Callable[[str], tuple[list[str], str]] | None = None


@dataclass(frozen=True)
class Blocking:
    """Schedule of the packed GEMM: micro-tile ``mr x nr``, cache blocks ``kc``, ``mc``, ``nc``,
    ``threads`` (``auto``: the team above ``TEAM_MIN_FMAS``; ``team``; ``one``)."""

    isa: Isa
    mr: int = 6
    nr: int = 16
    kc: int = 256
    mc: int = 96
    nc: int = 512
    threads: str = "auto"
    cores: int = 2


def default_blocking(isa: Isa, ctype: str = "float", cores: int = 2) -> Blocking:
    """Register tiles that fill the ISA's registers; blocks for a 32-48 KiB L1 and >= 512 KiB
    L2 (the B micro-panel ``kc x nr`` in L1, the A block ``mc x kc`` in L2)."""
    w = isa.width(ctype)
    if isa.registers >= 32:
        return Blocking(isa, mr=12, nr=2 * w, kc=256, mc=96, nc=512, cores=cores)
    return Blocking(isa, mr=6, nr=2 * w, kc=256, mc=96, nc=512, cores=cores)


def fitted_mr(m: int, mr: int, choices: list[int]) -> int:
    """Register-tile rows for a GEMM of ``m`` rows: ``mr`` unless its padding rows pass 1/16
    of ``m``, else the choice up to ``mr`` with the fewest (the larger on a tie): a 32-channel
    convolution takes 8 rows, not 12 with 4 of 36 rows padding (measured 7% faster)."""
    def padding(r: int) -> int:
        return -(-m // r) * r - m
    if padding(mr) * 16 <= m:
        return mr
    return min((r for r in choices if r <= mr), key=lambda r: (padding(r), -r), default=mr)


def _fit(p: GemmProblem, bl: Blocking, rows: int, cols: int, nb: int) -> Blocking:
    """Round blocks to the micro-tile and the problem; cut them while there are fewer than
    four macro-tiles per core (so both cores get balanced work)."""
    mr, nr = bl.mr, bl.nr
    mc = max(mr, min(-(-bl.mc // mr) * mr, -(-rows // mr) * mr))
    nc = max(nr, min(-(-bl.nc // nr) * nr, -(-cols // nr) * nr))
    kc = max(1, min(bl.kc, p.k))
    while nb * -(-rows // mc) * -(-cols // nc) < 4 * bl.cores:
        if nc > 4 * nr:
            nc = -(-(nc // 2) // nr) * nr
        elif mc > 2 * mr:
            mc = -(-(mc // 2) // mr) * mr
        else:
            break
    return replace(bl, mc=mc, nc=nc, kc=kc)


def _team(p: GemmProblem, bl: Blocking) -> bool:
    if bl.threads in ("team", "one"):
        return bl.threads == "team"
    return p.batch * p.m * p.n * p.k >= TEAM_MIN_FMAS


def _index(fold: str | None, axis: str, var: str, size: int) -> list[str]:
    """Declare ``kw_b`` and the problem's own index from a folded index ``var``."""
    if fold == axis:
        return [f"const int kw_b = {var} / {size};", f"const int kw_{axis} = {var} % {size};"]
    return [f"const int kw_{axis} = {var};"]


def _elem(stmts: list[str], dst: str, value: str, ctype: str) -> list[str]:
    return ["{", *stmts, f"{dst} = ({ctype})({value});", "}"]


def _pack_b(p: GemmProblem, bl: Blocking, fold: str | None, cols: int) -> list[str]:
    """All of B, panel by panel over the team (``omp for``), into ``kw_bp``."""
    nr, ct = bl.nr, p.ctype
    np_ = -(-cols // nr)
    nbb = p.batch if (p.b_batched and fold is None) else 1
    return ["#pragma omp for schedule(static)",
            f"for (int kw_t = 0; kw_t < {nbb * np_}; ++kw_t) {{",
            f"const int kw_bb = kw_t / {np_};", f"const int kw_jp = kw_t % {np_};",
            *(_skip_empty(p, "kw_bb") if nbb > 1 else []),
            f"{ct}* __restrict__ kw_dst = kw_bp + (size_t)kw_t * {p.k * nr};",
            *_pack_b_panel(p, bl, fold, nbb, cols), "}"]


def _pack_b_tile(p: GemmProblem, bl: Blocking, fold: str | None, cols: int) -> list[str]:
    """The tile's own ``K x nc`` block of B (its ``kw_npn`` panels) into ``kw_bt``."""
    nr, ct = bl.nr, p.ctype
    nbb = p.batch if (p.b_batched and fold is None) else 1
    return ["for (int kw_jr = 0; kw_jr < kw_npn; ++kw_jr) {",
            "const int kw_bb = kw_tb;", f"const int kw_jp = kw_j0 / {nr} + kw_jr;",
            f"{ct}* __restrict__ kw_dst = kw_bt + (size_t)kw_jr * {p.k * nr};",
            "(void)kw_bb;", *_pack_b_panel(p, bl, fold, nbb, cols), "}"]


def _pack_b_panel(p: GemmProblem, bl: Blocking, fold: str | None, nbb: int,
                  cols: int) -> list[str]:
    """Fill panel ``kw_jp`` (of batch ``kw_bb``) at ``kw_dst``: its valid columns, zeros past
    the last of the ``cols``."""
    nr, ct = bl.nr, p.ctype
    b_of = "kw_bb" if nbb > 1 else "0"
    valid = [f"const int kw_nv = kw_jp * {nr} + {nr} <= {cols} ? {nr} : {cols} - kw_jp * {nr};"]
    if p.b_columns is not None and p.load_b_cols is not None and p.k_shape and fold != "n":
        cstmts, cvals = p.b_columns("kw_col")
        bstmts, bval = p.load_b_cols("kw_b", "kw_s")
        gather = ["{", f"const int kw_b = {b_of};", "(void)kw_b;", *_k_loops(p),
                  "#pragma omp simd", f"for (int kw_s = 0; kw_s < {nr}; ++kw_s) {{", *bstmts,
                  f"kw_dst[kw_kk * {nr} + kw_s] = kw_s < kw_nv ? ({ct})({bval}) : ({ct})0;",
                  "}", "}" * len(p.k_shape), "}"]
        return [*valid, *[f"int kw_cv{j}[{nr}];" for j in range(len(cvals))],
                f"for (int kw_s = 0; kw_s < {nr}; ++kw_s) {{",  # padding columns: column 0
                f"const int kw_col = kw_jp * {nr} + (kw_s < kw_nv ? kw_s : 0);", "{", *cstmts,
                *[f"kw_cv{j}[kw_s] = {v};" for j, v in enumerate(cvals)], "}", "}",
                *pack_b_runs(p, bl.nr, b_of, gather, _k_loops(p))]
    stmts, val = p.load_b("kw_b", "kw_k", "kw_n")
    elem = ["{", *_index(fold, "n", "kw_col", p.n),
            *([f"const int kw_b = {b_of};"] if fold != "n" else []),
            "const int kw_k = kw_kk;", *_elem(stmts, f"kw_dst[kw_kk * {nr} + kw_s]", val, ct),
            "}"]
    col = f"const int kw_col = kw_jp * {nr} + kw_s;"
    if p.b_n_contig:
        loops = [f"for (int kw_kk = 0; kw_kk < {p.k}; ++kw_kk) {{",
                 "for (int kw_s = 0; kw_s < kw_nv; ++kw_s) {", col, *elem, "}",
                 f"for (int kw_s = kw_nv; kw_s < {nr}; ++kw_s) kw_dst[kw_kk * {nr} + kw_s] = 0;",
                 "}"]
    else:
        loops = [f"for (int kw_s = 0; kw_s < {nr}; ++kw_s) {{",
                 f"if (kw_s >= kw_nv) {{ for (int kw_kk = 0; kw_kk < {p.k}; ++kw_kk) "
                 f"kw_dst[kw_kk * {nr} + kw_s] = 0; continue; }}", col,
                 *_k_loops(p), *elem, "}" * (len(p.k_shape or (1,))), "}"]
    return [*valid, *loops]


def _k_loops(p: GemmProblem) -> list[str]:
    if not p.k_shape:
        return [f"for (int kw_kk = 0; kw_kk < {p.k}; ++kw_kk) {{"]
    out, flat = [], "0"
    for d, size in enumerate(p.k_shape):
        out.append(f"for (int kw_kd{d} = 0; kw_kd{d} < {size}; ++kw_kd{d}) {{")
        flat = f"({flat}) * {size} + kw_kd{d}"
    return [*out, f"const int kw_kk = {flat};"]


def _pack_a(p: GemmProblem, bl: Blocking, fold: str | None) -> list[str]:
    mr, ct = bl.mr, p.ctype
    stmts, val = p.load_a("kw_b", "kw_m", "kw_k")
    elem = ["{", *_index(fold, "m", "kw_row", p.m),
            *([] if fold == "m" else ["const int kw_b = kw_tb;"]),
            "const int kw_k = kw_pc + kw_kk;",
            *_elem(stmts, f"kw_dst[kw_kk * {mr} + kw_r]", val, ct), "}"]
    row = f"const int kw_row = kw_i0 + kw_ip * {mr} + kw_r;"
    zero = f"if (kw_i0 + kw_ip * {mr} + kw_r >= kw_rows) {{ for (int kw_kk = 0; " \
           f"kw_kk < kw_kcv; ++kw_kk) kw_dst[kw_kk * {mr} + kw_r] = 0; continue; }}"
    if p.a_k_contig:
        body = [f"for (int kw_r = 0; kw_r < {mr}; ++kw_r) {{", zero, row,
                "for (int kw_kk = 0; kw_kk < kw_kcv; ++kw_kk) {", *elem, "}", "}"]
    else:
        body = [f"for (int kw_r = 0; kw_r < {mr}; ++kw_r) {{ {zero} }}",
                "for (int kw_kk = 0; kw_kk < kw_kcv; ++kw_kk) {",
                f"for (int kw_r = 0; kw_r < {mr}; ++kw_r) {{",
                f"if (kw_i0 + kw_ip * {mr} + kw_r >= kw_rows) continue;", row, *elem, "}", "}"]
    return ["for (int kw_ip = 0; kw_ip < kw_mp; ++kw_ip) {",
            f"{ct}* __restrict__ kw_dst = kw_pa + kw_ip * {mr} * kw_kcv;", *body, "}"]


def _store_tile(p: GemmProblem, bl: Blocking, fold: str | None) -> list[str]:
    """The caller's store over the valid part of the finished ``MR x NR`` tile."""
    stmts = p.store("kw_b", "kw_m", "kw_n", "kw_v")
    bidx = [] if fold else ["const int kw_b = kw_tb;"]
    m_ix = _index(fold, "m", "kw_row", p.m) if fold == "m" else ["const int kw_m = kw_row;"]
    n_ix = _index(fold, "n", "kw_col", p.n) if fold == "n" else ["const int kw_n = kw_col;"]
    # a row of the tile is a simd loop over a count fixed before it (a break in it kept the
    # epilogue scalar): each column is its own output element and the epilogue is pointwise
    return [f"const int kw_c0 = kw_j0 + kw_jr * {bl.nr};",
            f"const int kw_sv = kw_cols - kw_c0 < {bl.nr} ? kw_cols - kw_c0 : {bl.nr};",
            f"for (int kw_r = 0; kw_r < {bl.mr}; ++kw_r) {{",
            f"const int kw_row = kw_i0 + kw_ip * {bl.mr} + kw_r;",
            "if (kw_row >= kw_rows) break;", *m_ix,
            "#pragma omp simd",
            "for (int kw_s = 0; kw_s < kw_sv; ++kw_s) {",
            "const int kw_col = kw_c0 + kw_s;", *n_ix, *bidx,
            f"const {p.ctype} kw_v = kw_tile[kw_r * kw_ldc + kw_s];", "{", *stmts, "}", "}", "}"]


def _skip_empty(p: GemmProblem, b: str) -> list[str]:
    """``continue`` where batch ``b``'s K is all zeros (``GemmProblem.k_empty``)."""
    if p.k_empty is None:
        return []
    stmts, cond = p.k_empty(b)
    return ["{", *stmts, f"if ({cond}) continue;", "}"]


def _k_extent(p: GemmProblem, fold: str | None) -> list[str]:
    """``kw_kn``: the tile's K, 0 for a batch of all-zero K (one empty block: the
    micro-kernel writes zeros, the store adds the bias and the epilogue)."""
    if p.k_empty is None or fold is not None:
        return [f"const int kw_kn = {p.k};"]
    stmts, cond = p.k_empty("kw_tb")
    return ["int kw_kn;", "{", *stmts, f"kw_kn = ({cond}) ? 0 : {p.k};", "}"]


def gemm_source(p: GemmProblem, bl: Blocking) -> tuple[str, list[str]]:
    """``(helpers, body)``: file-scope C++ (guarded, shareable) and the statements of the
    function that runs the GEMM (it reads the caller's buffers through the fragments)."""
    fold = None
    if p.batch > 1 and not p.b_batched:
        fold = "m"
    elif p.batch > 1 and not p.a_batched:
        fold = "n"
    rows = p.m * (p.batch if fold == "m" else 1)
    cols = p.n * (p.batch if fold == "n" else 1)
    nb = 1 if fold else p.batch
    bl = _fit(p, bl, rows, cols, nb)
    tile_b = rows <= bl.mc and 0 < p.k <= TILE_B_MAX_K
    if tile_b:  # one K block; nc cut so the tile's B block stays in L2
        size = 8 if p.ctype == "double" else 4
        cap = max(bl.nr, TILE_B_BYTES // (p.k * size) // bl.nr * bl.nr)
        bl = replace(bl, kc=p.k, nc=min(bl.nc, cap))
    mr, nr, kc, mc, nc, ct = bl.mr, bl.nr, bl.kc, bl.mc, bl.nc, p.ctype
    mt, nt, np_ = -(-rows // mc), -(-cols // nc), -(-cols // nr)
    nbb = p.batch if (p.b_batched and fold is None) else 1
    uk = ukernel_name(bl.isa, ct, mr, nr)
    team = "1" if _team(p, bl) and nb * mt * nt > 1 else "0"
    per_thread = mc * kc + mc * nc + (kc * nc if tile_b else 0)
    boff = f"kw_tb * {np_} + " if nbb > 1 else ""
    bpanel = (f"kw_bt + (size_t)kw_jr * {p.k * nr}" if tile_b else
              f"kw_bp + ((size_t)({boff}kw_j0 / {nr} + kw_jr) * {p.k} + kw_pc) * {nr}")
    global_b = [] if tile_b else [
        f"{ct}* __restrict__ kw_bp = ({ct}*)kw_scratch(0, sizeof({ct}) * "
        f"{nbb * np_ * p.k * nr}ull);"]
    body = [
        f"/* packed GEMM {p.batch}x{p.m}x{p.n}x{p.k} ({ct}): {bl.isa.name} micro-kernel "
        f"{mr}x{nr}, kc {kc}, mc {mc}, nc {nc}, fold {fold}"
        f"{', B packed per tile' if tile_b else ''} */",
        f"const int kw_team = {team} && omp_get_max_threads() > 1;",
        "const int kw_nthr = kw_team ? omp_get_max_threads() : 1;",
        *global_b,
        f"{ct}* kw_tp = ({ct}*)kw_scratch(1, sizeof({ct}) * {per_thread}ull * kw_nthr);",
        "#pragma omp parallel if(kw_team)", "{",
        *([] if tile_b else _pack_b(p, bl, fold, cols)),
        f"{ct}* __restrict__ kw_pa = kw_tp + (size_t)omp_get_thread_num() * {per_thread};",
        f"{ct}* __restrict__ kw_ws = kw_pa + {mc * kc};",
        *([f"{ct}* __restrict__ kw_bt = kw_ws + {mc * nc};"] if tile_b else []),
        f"const int kw_rows = {rows}, kw_cols = {cols}, kw_ldc = {nc};",
        *(["int kw_a_tb = -1;"] if tile_b else []),
        "#pragma omp for schedule(dynamic, 1)",
        f"for (int kw_t = 0; kw_t < {nb * mt * nt}; ++kw_t) {{",
        f"const int kw_tb = kw_t / {mt * nt};",
        f"const int kw_i0 = kw_t / {nt} % {mt} * {mc};",
        f"const int kw_j0 = kw_t % {nt} * {nc};",
        f"const int kw_mp = (kw_i0 + {mc} <= kw_rows ? {mc} : kw_rows - kw_i0 + {mr - 1})"
        f" / {mr};",
        f"const int kw_npn = (kw_j0 + {nc} <= kw_cols ? {nc} : kw_cols - kw_j0 + {nr - 1})"
        f" / {nr};",
        "(void)kw_tb;",
        *_k_extent(p, fold),
        *(["if (kw_kn > 0) {", *_pack_b_tile(p, bl, fold, cols), "}"] if tile_b else []),
        f"for (int kw_pc = 0; kw_pc < (kw_kn > 0 ? kw_kn : 1); kw_pc += {kc}) {{",  # K = 0: one
        f"const int kw_kcv = kw_pc + {kc} <= kw_kn ? {kc} : kw_kn - kw_pc;",
        f"const int kw_last = kw_pc + {kc} >= kw_kn;",
        # per tile B: one K block and one row block, so A changes only with the batch
        *(["if (kw_tb != kw_a_tb) {", "kw_a_tb = kw_tb;", *_pack_a(p, bl, fold), "}"]
          if tile_b else _pack_a(p, bl, fold)),
        "for (int kw_jr = 0; kw_jr < kw_npn; ++kw_jr) {",
        f"const {ct}* kw_bpan = {bpanel};",
        "for (int kw_ip = 0; kw_ip < kw_mp; ++kw_ip) {",
        f"{ct}* kw_tile = kw_ws + kw_ip * {mr} * kw_ldc + kw_jr * {nr};",
        f"{uk}(kw_kcv, kw_pa + kw_ip * {mr} * kw_kcv, kw_bpan, kw_tile, kw_ldc, kw_pc > 0);",
        "if (kw_last) {", *_store_tile(p, bl, fold), "}",
        "}", "}", "}", "}", "}",
    ]
    helpers = COMMON + ukernel_source(bl.isa, ct, mr, nr)
    return helpers, body
