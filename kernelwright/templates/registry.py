"""The template registry: every template, and lookup by name or (operator class, backend).

Defaults were tuned on the SYCL CPU device (Intel OpenCL, 2 cores) with
``examples/bench_templates.py`` and the harness: the CPU compiler vectorises ACROSS work-items,
which suits elementwise kernels (one float per work-item, coalesced); for GEMM, row norms and
row reductions one explicit ``sycl::vec`` block per work-item in work-groups of fewer than 16
work-items (so the implicit vectoriser stays out: at 16 it slows such kernels 4-20x) and no
barriers is 1.2-2.5x faster (``staging="vector"``, ``reduction="vector"``).
"""

from __future__ import annotations

from collections.abc import Mapping

from kernelwright.templates.base import Param, ParamValue, Template

_POW2 = (16, 32, 64, 128, 256, 512, 1024)
_FAST = Param("fast_math", (False, True), False,
              "-ffast-math (vectorised exp/tanh/erf from libmvec) with inf/nan kept")
_CHUNK = Param("chunk", (1, 4, 16, 64), 16, "rows per OpenMP scheduling chunk")
_RPG = Param("rows_per_group", (1, 2, 4, 8, 16, 32), 1,
             "rows a work-group handles one after another (fewer, longer work-groups)")
_REDUCTION = Param("reduction", ("group", "tree"), "group",
                   "reduce_over_group or a local-memory tree")


def _block_rows_divides_tile(p: Mapping[str, ParamValue]) -> str | None:
    if p["staging"] == "vector":  # no local-memory tile
        return None
    if p["block_rows"] > p["tile"] or p["tile"] % p["block_rows"]:
        return f"block_rows={p['block_rows']} must divide tile={p['tile']}; lower block_rows"
    if p["tile"] * p["tile"] // p["block_rows"] > 1024:
        return (f"tile={p['tile']} with block_rows={p['block_rows']} makes a work-group of more "
                "than 1024 work-items; raise block_rows")
    return None


def _register_block_fits(p: Mapping[str, ParamValue]) -> str | None:
    # all choices are powers of two and reg <= 8 <= tile, so the register block divides the tile
    if p["staging"] == "vector":  # one work-item per register block: tiles do not apply
        return None
    wg = (p["tile_m"] // p["reg_m"]) * (p["tile_n"] // p["reg_n"])
    if wg > 1024:
        return f"a work-group of {wg} work-items exceeds 1024; raise reg_m/reg_n or lower tiles"
    return None


def _inner_fits_tile(p: Mapping[str, ParamValue]) -> str | None:
    if p["inner"] > p["tile"]:
        return f"inner={p['inner']} must not exceed tile={p['tile']}; lower inner"
    return None


_SYCL = (
    Template(
        name="sycl.elementwise_vec", operator_class="elementwise", backend="sycl",
        file="sycl/elementwise.py.j2",
        description="elementwise chain, coalesced vectors, several per work-item",
        params=(
            Param("wg_size", _POW2, 256, "work-group size"),
            Param("vec", (1, 2, 4, 8, 16), 1, "consecutive floats per vector load/store"),
            Param("unroll", (1, 2, 4, 8), 1, "vectors per work-item, a work-group apart"),
            Param("chunks", (1, 2, 4, 8), 1, "vector chunks per work-item, a grid apart"),
        ),
    ),
    Template(
        name="sycl.rowwise_norm_wg", operator_class="rowwise_norm", backend="sycl",
        file="sycl/rowwise_norm.py.j2",
        description="softmax/layernorm/rmsnorm, one work-group per row, work-group reductions",
        params=(
            Param("wg_size", (1, 2, 4, 8, *_POW2), 8,
                  "work-group size (work-items per row; reduction=vector: rows per group)"),
            _RPG,
            Param("reduction", ("group", "tree", "vector"), "vector",
                  "reduce_over_group, a local-memory tree, or 'vector': one work-item per "
                  "row with sycl::vec statistics, no work-group reduction (online/unroll unused)"),
            Param("vec", (4, 8, 16), 16, "reduction=vector: floats per sycl::vec"),
            Param("online", (False, True), False,
                  "single-pass statistics (online softmax / sum and sum of squares)"),
            Param("unroll", (1, 2, 4, 8), 1, "unroll factor of the column loops"),
            Param("fast_math", (False, True), False, "sycl::native::exp instead of sycl::exp"),
        ),
    ),
    Template(
        name="sycl.row_reduce_wg", operator_class="reduction", backend="sycl",
        file="sycl/row_reduce.py.j2",
        description="last-dim reduction, one work-group (or one vector work-item) per row",
        params=(
            Param("wg_size", (1, 2, 4, 8, *_POW2), 16,
                  "work-group size (work-items per row; reduction=vector: rows per group)"),
            Param("accumulators", (1, 2, 4, 8), 4, "independent partial sums per work-item"),
            _RPG,
            Param("reduction", ("group", "tree", "vector"), "group",
                  "reduce_over_group, a local-memory tree, or 'vector': one work-item per "
                  "row with sycl::vec accumulators, no work-group reduction"),
            Param("vec", (4, 8, 16), 16, "reduction=vector: floats per sycl::vec load"),
        ),
    ),
    Template(
        name="sycl.transpose_tiled", operator_class="layout", backend="sycl",
        file="sycl/transpose.py.j2",
        description="transpose through a padded local-memory tile",
        params=(
            Param("tile", (8, 16, 32, 64), 16, "tile edge (work-items along a row)"),
            Param("block_rows", (1, 2, 4, 8, 16), 1, "tile rows copied per work-item"),
            Param("pad", (0, 1), 1, "local-memory padding per tile row"),
            Param("staging", ("local", "vector"), "vector",
                  "a padded local-memory tile, or 'vector': one vec x vec block per "
                  "work-item in registers (tile/block_rows/pad unused)"),
            Param("vec", (4, 8, 16), 16, "staging=vector: edge of a work-item's block"),
            Param("group", (1, 2, 4, 8), 8, "staging=vector: work-items per work-group"),
        ),
        rules=(_block_rows_divides_tile,),
    ),
    Template(
        name="sycl.gemm_tiled", operator_class="gemm", backend="sycl", file="sycl/gemm.py.j2",
        description="work-group tiled, register-blocked GEMM with a fused epilogue",
        params=(
            Param("tile_m", (8, 16, 32, 64, 128), 64, "rows of C per work-group"),
            Param("tile_n", (8, 16, 32, 64, 128), 64, "columns of C per work-group"),
            Param("tile_k", (4, 8, 16, 32), 4,
                  "depth of a local-memory tile (k-loop unroll if staging is none/vector)"),
            Param("reg_m", (1, 2, 4, 8), 8, "rows of the register block per work-item"),
            Param("reg_n", (1, 2, 4, 8), 2,
                  "columns (staging=vector, B as K x N: vectors) of the register block per "
                  "work-item"),
            Param("staging", ("local", "none", "vector"), "vector",
                  "stage tiles in local memory, read global memory directly, or 'vector': "
                  "one sycl::vec register block per work-item, no local memory (tile_m/tile_n "
                  "unused; tile_k is the k-loop unroll)"),
            Param("vec", (4, 8, 16), 16,
                  "staging=vector: floats per sycl::vec (along N for B as K x N, along K "
                  "for B as N x K)"),
            Param("group", (1, 2, 4, 8, 16), 8, "staging=vector: work-items per work-group"),
            Param("nk_kernel", ("dot", "transpose"), "transpose",
                  "staging=vector with B stored N x K: dot products along K, or copy B to "
                  "K x N first (torch transpose) and use outer products"),
            Param("softmax_wg", (16, 32, 64, 128, 256), 64,
                  "work-group of the softmax kernel (staging=vector: one work-item per row)"),
        ),
        rules=(_register_block_fits,),
    ),
)

_CPP = (
    Template(
        name="cpp.elementwise_omp", operator_class="elementwise", backend="cpp",
        file="cpp/elementwise.py.j2", description="OpenMP blocks with an OpenMP SIMD inner loop",
        params=(Param("block", (1024, 4096, 16384, 65536), 16384, "elements per OpenMP block"),
                _FAST),
    ),
    Template(
        name="cpp.rowwise_norm_omp", operator_class="rowwise_norm", backend="cpp",
        file="cpp/rowwise_norm.py.j2", description="OpenMP over rows, SIMD passes per row",
        params=(_CHUNK, _FAST),
    ),
    Template(
        name="cpp.row_reduce_omp", operator_class="reduction", backend="cpp",
        file="cpp/row_reduce.py.j2", description="OpenMP over rows, SIMD reduction per row",
        params=(_CHUNK, _FAST),
    ),
    Template(
        name="cpp.transpose_blocked", operator_class="layout", backend="cpp",
        file="cpp/transpose.py.j2", description="cache-blocked transpose over OpenMP threads",
        params=(Param("tile", (16, 32, 64, 128, 256), 64, "outer block edge"),
                Param("inner", (4, 8, 16, 32), 8, "inner (L1) block edge")),
        rules=(_inner_fits_tile,),
    ),
    Template(
        name="cpp.gemm_blocked", operator_class="gemm", backend="cpp", file="cpp/gemm.py.j2",
        description="OpenMP over C tiles, packed B panel, SIMD accumulate, fused epilogue",
        params=(
            Param("block_m", (4, 8, 16, 32, 64), 16, "rows of C per tile"),
            Param("block_n", (16, 32, 64, 128, 256), 64, "columns of C per tile"),
            Param("block_k", (32, 64, 128, 256), 128, "depth of a packed B panel"),
            _FAST,
        ),
    ),
)

TEMPLATES: dict[str, Template] = {t.name: t for t in (*_SYCL, *_CPP)}


def get_template(name: str) -> Template:
    """The template called ``name``; an unknown name lists the choices."""
    if name not in TEMPLATES:
        raise ValueError(f"unknown template {name!r}; choose one of: {', '.join(TEMPLATES)}")
    return TEMPLATES[name]


def templates_for(operator_class: str, backend: str | None = None) -> list[Template]:
    """Templates implementing ``operator_class`` (on ``backend`` if given), SYCL first."""
    return [t for t in TEMPLATES.values()
            if t.operator_class == operator_class and backend in (None, t.backend)]
