"""CUDA (``__global__`` kernels; nvcc on a GPU, or the PTX emulator): block reductions in
shared memory."""

from __future__ import annotations

from typing import Any

from kernelwright.tools.lower.backends.base import Codegen, register
from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dialect import CUDA
from kernelwright.tools.lower.emit.common import KernelSource, signature

CUDA_REDUCE = r"""
#define KW_OP(name, expr) template <typename T> struct kw_op_##name { \
    __device__ T operator()(T a, T b) const { return expr; } };
KW_OP(plus, a + b)
KW_OP(multiplies, a * b)
KW_OP(maximum, a > b ? a : b)
KW_OP(minimum, a < b ? a : b)
KW_OP(logical_or, a || b)
KW_OP(logical_and, a && b)
template <typename T, typename Op>
static __device__ T kw_block_reduce(T v, Op op, void* smem) {
    T* s = static_cast<T*>(smem);
    int l = threadIdx.x, n = blockDim.x;
    __syncthreads();
    s[l] = v;
    __syncthreads();
    for (int off = n / 2; off > 0; off >>= 1) {
        if (l < off) s[l] = op(s[l], s[l + off]);
        __syncthreads();
    }
    T r = s[0];
    __syncthreads();
    return r;
}
"""


@register
class CudaCodegen(Codegen):
    name = "cuda"
    dialect = CUDA
    subgroup_size = 32  # a warp; reduced through shared memory like a block

    def prelude(self) -> str:
        # a separate part of the module (emit_program joins parts with a newline)
        return self.dialect.prelude() + "\n" + CUDA_REDUCE

    def wrap(self, name: str, k: KernelCtx, units: int, wg: int, cooperative: bool,
             work: int | None = None, threads: str = "auto") -> KernelSource:
        args, decl = signature(k)
        head = f'extern "C" __global__ void __launch_bounds__({wg}) {name}({decl}) {{\n'
        if cooperative:
            head += ("    __shared__ double kw_smem_raw[" + str(wg) + "];\n"
                     "    void* kw_smem = kw_smem_raw;\n"
                     "    const int u = blockIdx.x;\n    const int l = threadIdx.x;\n")
        else:
            head += (f"    const int u = blockIdx.x * blockDim.x + threadIdx.x;\n"
                     f"    if (u >= {units}) return;\n")
        text = head + "\n".join(k.lines) + "\n}\n"
        return KernelSource(name, text, args, units, wg, cooperative)

    def group_reduce(self, value: str, ctype: str, op: str, subgroup: bool) -> str:
        return f"kw_block_reduce<{ctype}>({value}, kw_op_{op}<{ctype}>(), kw_smem)"

    def launch_step(self, kernel: Any, args: list[Any], step: dict[str, Any]) -> None:
        grid = -(-step["global"] // step["local"])
        kernel(*args, grid=(grid,), block=(step["local"],))
