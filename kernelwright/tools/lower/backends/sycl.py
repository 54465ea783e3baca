"""SYCL (free-function kernels on the Intel OpenCL CPU device): the default backend."""

from __future__ import annotations

from typing import Any

from kernelwright.tools.lower.backends.base import Codegen, register
from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dialect import SYCL
from kernelwright.tools.lower.emit.common import KernelSource, signature

SUB_GROUP = 16  # the SYCL CPU device's widest float sub-group (AVX-512)


@register
class SyclCodegen(Codegen):
    name = "sycl"
    dialect = SYCL
    vendor_library = True  # host BLAS / oneDNN on the device's shared (zero-copy) memory
    launch_modes = ("chain", "steps")
    subgroup_size = SUB_GROUP
    subgroup_kernels = True

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
