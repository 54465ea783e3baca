"""CUDA candidate for l1_gelu: four elements per thread through float4 loads/stores.

Runs through CuPy on a CUDA device, or on the PTX emulator (kernelwright.tools.gpusim) on
CPU tensors when there is none.
"""

import torch
from torch import nn

from kernelwright.tools.backends import cuda

SRC = r"""
__device__ __forceinline__ float gelu_tanh(float v) {
    float inner = 0.7978845608028654f * (v + 0.044715f * v * v * v);
    return 0.5f * v * (1.0f + tanhf(inner));
}

extern "C" __global__ void gelu_vec4(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (i + 3 < n) {
        float4 v = *reinterpret_cast<const float4*>(x + i);
        float4 r = make_float4(gelu_tanh(v.x), gelu_tanh(v.y), gelu_tanh(v.z), gelu_tanh(v.w));
        *reinterpret_cast<float4*>(y + i) = r;
    } else {
        for (int k = i; k < n; ++k) y[k] = gelu_tanh(x[k]);
    }
}
"""

BLOCK = 256


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.kernels = cuda.load_inline(SRC)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        threads = (n + 3) // 4
        grid = ((threads + BLOCK - 1) // BLOCK,)
        self.kernels.gelu_vec4(x, y, n, grid=grid, block=(BLOCK,))
        return y
