"""SYCL (free-function kernels on the Intel OpenCL CPU device): the default backend."""

from __future__ import annotations

from typing import Any

from kernelwright.tools.lower.backends.base import Codegen, register
from kernelwright.tools.lower.backends.sycl_direct import (
    direct_conv_sycl,
    direct_defaults,
    direct_vectors_apply,
)
from kernelwright.tools.lower.backends.sycl_gemm import (
    packed_gemm_sycl,
    sycl_conv_defaults,
    sycl_gemm_choices,
    sycl_gemm_defaults,
    uses_sycl_packed,
)
from kernelwright.tools.lower.backends.sycl_scan import scan_tiles_body, tiles_apply
from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dialect import SYCL
from kernelwright.tools.lower.emit.anchor import conv_body
from kernelwright.tools.lower.emit.common import KernelSource, kernel_info, new_ctx, signature
from kernelwright.tools.lower.emit.pointwise import (
    padded_row_split,
    pointwise_rows_body,
    pointwise_runs_body,
    row_split,
)
from kernelwright.tools.lower.emit.rows import StashMismatch, rows_body
from kernelwright.tools.lower.schedule import Group, epilogue_cost

SUB_GROUP = 16  # the SYCL CPU device's widest float sub-group (AVX-512)
# an anchor epilogue at least this costly (ir.Pointwise.cost: sigmoid 4, Mish 8) runs apart
EPI_PASS_COST = 4
# strategy=subgroup rows: sub-group size (lanes per row) and rows (sub-groups) per work-group
SUBGROUP_ROWS = {"sg": [8, 16, 32], "rpg": [1, 2, 4, 8]}


@register
class SyclCodegen(Codegen):
    name = "sycl"
    dialect = SYCL
    vendor_library = True  # host BLAS / oneDNN on the device's shared (zero-copy) memory
    launch_modes = ("chain", "steps")
    shares_kernels = True
    subgroup_size = SUB_GROUP
    subgroup_kernels = True
    # a sub-group per contiguous row, its lanes on neighbouring elements: the device's
    # vectoriser makes these plain vector loads (lanes along a row, one work-item per row,
    # stay scalar there: 0.82 vs 0.16 ms for sums of 896 rows of 4096 floats, 8.7 vs 1.5 ms
    # for their softmax)
    contiguous_rows = "subgroup"

    def emit_group(self, grp: Group, real: dict[int, str], names: dict[int, str],
                   params: dict[str, Any], idx_type: str = "int") -> KernelSource:
        if uses_sycl_packed(grp, params):
            return packed_gemm_sycl(new_ctx(self, real, grp, idx_type), grp, names, params)
        if grp.kind == "conv" and params.get("form", "vectors") == "vectors":
            k = new_ctx(self, real, grp, idx_type)
            if direct_vectors_apply(k, grp):
                return direct_conv_sycl(k, grp, names, params)
        if grp.kind == "rows" and params.get("strategy") == "subgroup":
            return self._subgroup_rows(grp, real, names, params, idx_type)
        if grp.kind == "scan" and params.get("form", "tiles") == "tiles" and tiles_apply(grp):
            return self._scan_tiles(grp, real, names, idx_type)
        return super().emit_group(grp, real, names, params, idx_type)

    def _subgroup_rows(self, grp: Group, real: dict[int, str], names: dict[int, str],
                       params: dict[str, Any], idx_type: str) -> KernelSource:
        """One row per sub-group of ``sg`` lanes (reduced with ``reduce_over_group`` on the
        sub-group), ``rpg`` rows per work-group: no work-group barrier anywhere, so a
        sub-group whose row is past the end leaves early as a whole."""
        sg, rpg = int(params.get("sg", SUB_GROUP)), int(params.get("rpg", 1))

        def attempt(stash: bool) -> tuple[KernelCtx, int]:
            k = new_ctx(self, real, grp, idx_type)
            k.subgroup = True
            return k, rows_body(k, grp, names, "u", "l", sg, stash=stash)

        try:
            k, rows = attempt(True)
        except StashMismatch:  # the epilogue reads the stash at another index: no stash
            k, rows = attempt(False)
        return _subgroup_kernel(grp, k, rows, sg, rpg)

    def emit_pointwise(self, k: KernelCtx, grp: Group, names: dict[int, str],
                       params: dict[str, Any]) -> int:
        """Work-groups inside one row when a trailing block of the shape allows it, padded
        to whole work-groups where that idles few lanes (see ``pointwise_rows_body``);
        else, and for ``ipw`` > 1, runs of ``wg`` neighbouring elements over the flat index
        (``pointwise_runs_body``)."""
        wg, ipw = int(params.get("wg", 128)), int(params.get("ipw", 1))
        shape = tuple(grp.main[0].shape)
        split = (row_split(shape, wg) or padded_row_split(shape, wg)) if ipw == 1 else None
        k.emit("const int kw_g = it.get_group(0);")
        k.emit("const int kw_l = it.get_local_id(0);")
        if split is None:
            return pointwise_runs_body(k, grp, names, "kw_g", "kw_l", wg, ipw)
        return pointwise_rows_body(k, grp, names, "kw_g", "kw_l", wg, split[1])

    def emit_conv(self, k: KernelCtx, grp: Group, names: dict[int, str],
                  params: dict[str, Any]) -> int:
        """The direct convolution with each work-group along one output row (``conv_body``'s
        ``lanes``): on l1_85 (depthwise 3x7 over 26-wide rows, work-groups of 64) flat
        positions made every input read a gather, 12.4 -> 7.4 ms. Work-groups of 16, which
        pad such a row less, ran slower (14 ms): the per-group cost outweighs idle lanes."""
        k.emit("const int kw_g = it.get_group(0);")
        k.emit("const int kw_l = it.get_local_id(0);")
        return conv_body(k, grp, names, "u", int(params.get("ocb", 4)),
                         lanes=("kw_g", "kw_l", int(params.get("wg", 64))))

    def _scan_tiles(self, grp: Group, real: dict[int, str], names: dict[int, str],
                    idx_type: str) -> KernelSource:
        """A scan along its last dim: one line per sub-group, a tile of lanes at a time
        (``sycl_scan.py``)."""
        k = new_ctx(self, real, grp, idx_type)
        k.subgroup = True
        return _subgroup_kernel(grp, k, scan_tiles_body(k, grp, names, SUB_GROUP), SUB_GROUP, 1)

    def group_space(self, grp: Group) -> dict[str, list[Any]]:
        """The base tiles, plus for GEMM and convolution the local-memory tiled kernel of
        ``sycl_gemm.py`` and its blocking."""
        space = super().group_space(grp)
        if grp.kind == "rows":
            space.update({p: list(c) for p, c in SUBGROUP_ROWS.items()})
        if grp.kind in ("gemm", "conv") and grp.epilogue:
            space["epi"] = ["fused", "pass"]
        if grp.kind == "gemm":
            space.update(sycl_gemm_choices())
        if grp.kind == "conv":
            space.update(sycl_gemm_choices())
            space["algo"] = ["gemm", "direct"]
            space["form"] = ["vectors", "items"]  # the direct form (sycl_direct.py or not)
        if grp.kind == "scan" and tiles_apply(grp):
            space["form"] = ["tiles", "lines"]
        return space

    def group_defaults(self, grp: Group) -> dict[str, Any]:
        """The sub-group row kernel's shape, used when a search picks ``strategy=subgroup``
        (every parameter of the space needs a default: the tuner enqueues full points)."""
        if grp.kind == "scan" and tiles_apply(grp):
            return {"form": "tiles"}
        if grp.kind != "rows":
            return {}
        return {"sg": SUB_GROUP, "rpg": rows_per_group(grp.domain.numel)}

    def anchor_defaults(self, grp: Group) -> dict[str, Any] | None:
        """The packed kernel's algorithm and blocking; an epilogue with transcendental math
        (cost >= ``EPI_PASS_COST``) in a kernel of its own (``epi=pass``): the packed
        kernel's work-item stores its tile one element at a time, where a pointwise kernel
        is vectorised across work-items (measured: GEMM 512^3 + Mish + Mish 9.4 -> 3.9 ms,
        + Sigmoid 3.7 -> 3.4 ms, + GELU unchanged)."""
        own = (sycl_gemm_defaults(grp.main[0]) if grp.kind == "gemm"
               else sycl_conv_defaults(grp.main[0]) if grp.kind == "conv" else None)
        if grp.kind == "conv" and own is not None:
            own.update(direct_defaults(grp.main[0], own["algo"]))
        if own is not None and grp.epilogue:
            own["epi"] = "pass" if epilogue_cost(grp) >= EPI_PASS_COST else "fused"
        return own

    def wrap(self, name: str, k: KernelCtx, units: int, wg: int, cooperative: bool,
             work: int | None = None, threads: str = "auto") -> KernelSource:
        args, decl = signature(k)
        prop = (f"SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::sub_group_size<{SUB_GROUP}>))\n"
                if k.subgroup else "")
        head = (f'extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))\n'
                f"{prop}void {name}({decl}) {{\n"
                f"    auto it = sycl::ext::oneapi::this_work_item::get_nd_item<1>();\n")
        if cooperative:
            head += ("    const int u = it.get_group(0);\n"
                     "    const int l = it.get_local_id(0);\n")
        else:
            head += f"    const int u = it.get_global_id(0);\n    if (u >= {units}) return;\n"
        text = head + "\n".join(k.lines) + "\n}\n"
        return KernelSource(name, text, args, units, wg, cooperative)

    def group_reduce(self, value: str, ctype: str, op: str, subgroup: bool) -> str:
        group = "it.get_sub_group()" if subgroup else "it.get_group()"
        return f"sycl::reduce_over_group({group}, {value}, sycl::{op}<{ctype}>())"

    def launch_step(self, kernel: Any, args: list[Any], step: dict[str, Any]) -> None:
        kernel(*args, global_size=(step["global"],), local_size=(step["local"],), wait=False)

    def prepared(self, owner: Any, plan: dict[str, Any]):
        """``launch=chain`` on a device that shares host memory: one C call per forward."""
        from kernelwright.tools.backends import active_registry
        from kernelwright.tools.lower.chains import SyclChain

        if owner.launch == "chain" and active_registry().get(self.name).zero_copy:
            return SyclChain(owner, plan)
        return None


def rows_per_group(rows: int) -> int:
    """Sub-groups (rows) per work-group: 8 (measured better than 4 or 1 on sums and softmax
    of 64 to 4096 floats per row), fewer where that would leave fewer than 32 work-groups."""
    rpg = 8
    while rpg > 1 and rows < 32 * rpg:
        rpg //= 2
    return rpg


def _subgroup_kernel(grp: Group, k: KernelCtx, units: int, sg: int, rpg: int) -> KernelSource:
    """The kernel around a body whose unit ``u`` is one sub-group of ``sg`` lanes (``l`` its
    lane), ``rpg`` sub-groups per work-group; a sub-group past the last unit leaves whole."""
    args, decl = signature(k)
    text = (f'extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))\n'
            f"SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::sub_group_size<{sg}>))\n"
            f"void {grp.name}({decl}) {{\n"
            "    auto it = sycl::ext::oneapi::this_work_item::get_nd_item<1>();\n"
            "    auto kw_sg = it.get_sub_group();\n"
            f"    const int u = it.get_group(0) * {rpg} + kw_sg.get_group_linear_id();\n"
            "    const int l = kw_sg.get_local_linear_id();\n"
            f"    if (u >= {units}) return;\n" + "\n".join(k.lines) + "\n}\n")
    src = KernelSource(grp.name, text, args, -(-units // rpg), sg * rpg, True)
    src.info = kernel_info(grp, k)
    return src
