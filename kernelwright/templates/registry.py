"""The template registry: every template, and lookup by name or (operator class, backend)."""

from __future__ import annotations

from kernelwright.templates.base import Param, Template

_POW2 = (16, 32, 64, 128, 256, 512, 1024)


def _elementwise_sycl() -> Template:
    return Template(
        name="sycl.elementwise_vec",
        operator_class="elementwise",
        backend="sycl",
        file="sycl/elementwise.py.j2",
        description="vectorised elementwise chain, several chunks per work-item",
        params=(
            Param("wg_size", _POW2, 256, "work-group size"),
            Param("vec", (1, 2, 4, 8, 16), 1, "consecutive floats per vector load/store"),
            Param("unroll", (1, 2, 4, 8), 1, "vectors per work-item, a work-group apart"),
            Param("chunks", (1, 2, 4, 8), 1, "vector chunks per work-item"),
        ),
    )


def _rowwise_sycl() -> Template:
    return Template(
        name="sycl.rowwise_norm_wg",
        operator_class="rowwise_norm",
        backend="sycl",
        file="sycl/rowwise_norm.py.j2",
        description="softmax/layernorm/rmsnorm, one work-group per row, work-group reductions",
        params=(
            Param("wg_size", _POW2, 128, "work-group size (work-items per row)"),
            Param("reduction", ("group", "tree"), "group",
                  "reduce_over_group or a local-memory tree"),
            Param("online", (False, True), False,
                  "single-pass statistics (online softmax / sum and sum of squares)"),
            Param("unroll", (1, 2, 4, 8), 1, "unroll factor of the column loops"),
            Param("fast_math", (False, True), False, "sycl::native::exp instead of sycl::exp"),
        ),
    )


def _reduction_sycl() -> Template:
    return Template(
        name="sycl.row_reduce_wg",
        operator_class="reduction",
        backend="sycl",
        file="sycl/row_reduce.py.j2",
        description="last-dim reduction, one work-group per row, tree or group combine",
        params=(
            Param("wg_size", _POW2, 64, "work-group size (work-items per row)"),
            Param("accumulators", (1, 2, 4, 8), 4, "independent partial sums per work-item"),
            Param("reduction", ("group", "tree"), "group",
                  "reduce_over_group or a local-memory tree"),
        ),
    )


def _transpose_sycl() -> Template:
    return Template(
        name="sycl.transpose_tiled",
        operator_class="layout",
        backend="sycl",
        file="sycl/transpose.py.j2",
        description="transpose through a padded local-memory tile",
        params=(
            Param("tile", (8, 16, 32, 64), 32, "tile edge (work-items along a row)"),
            Param("block_rows", (1, 2, 4, 8, 16), 4, "tile rows copied per work-item"),
            Param("pad", (0, 1), 1, "local-memory padding per tile row"),
        ),
        rules=(_block_rows_divides_tile,),
    )


def _block_rows_divides_tile(p: dict) -> str | None:
    if p["block_rows"] > p["tile"] or p["tile"] % p["block_rows"]:
        return f"block_rows={p['block_rows']} must divide tile={p['tile']}; lower block_rows"
    return None


def _gemm_sycl() -> Template:
    return Template(
        name="sycl.gemm_tiled",
        operator_class="gemm",
        backend="sycl",
        file="sycl/gemm.py.j2",
        description="work-group tiled, register-blocked GEMM with a fused epilogue",
        params=(
            Param("tile_m", (8, 16, 32, 64, 128), 32, "rows of C per work-group"),
            Param("tile_n", (8, 16, 32, 64, 128), 32, "columns of C per work-group"),
            Param("tile_k", (4, 8, 16, 32), 16, "depth of a local-memory tile (unroll if none)"),
            Param("reg_m", (1, 2, 4, 8), 2, "rows of the register block per work-item"),
            Param("reg_n", (1, 2, 4, 8), 2, "columns of the register block per work-item"),
            Param("staging", ("local", "none"), "local", "stage tiles in local memory or not"),
            Param("softmax_wg", (16, 32, 64, 128, 256), 64, "work-group of the softmax kernel"),
        ),
        rules=(_register_block_fits,),
    )


def _register_block_fits(p: dict) -> str | None:
    if p["tile_m"] % p["reg_m"] or p["tile_n"] % p["reg_n"]:
        return (f"reg_m={p['reg_m']} / reg_n={p['reg_n']} must divide tile_m={p['tile_m']} / "
                f"tile_n={p['tile_n']}; pick smaller register blocks")
    wg = (p["tile_m"] // p["reg_m"]) * (p["tile_n"] // p["reg_n"])
    if wg > 1024:
        return f"work-group of {wg} work-items exceeds 1024; raise reg_m/reg_n or lower the tiles"
    return None


TEMPLATES: dict[str, Template] = {t.name: t for t in (
    _elementwise_sycl(),
    _rowwise_sycl(),
    _reduction_sycl(),
    _transpose_sycl(),
    _gemm_sycl(),
)}


def get_template(name: str) -> Template:
    """The template called ``name``; an unknown name lists the choices."""
    if name not in TEMPLATES:
        raise ValueError(f"unknown template {name!r}; choose one of: {', '.join(TEMPLATES)}")
    return TEMPLATES[name]


def templates_for(operator_class: str, backend: str | None = None) -> list[Template]:
    """Templates implementing ``operator_class`` (on ``backend`` if given), best default first."""
    return [t for t in TEMPLATES.values()
            if t.operator_class == operator_class and backend in (None, t.backend)]
