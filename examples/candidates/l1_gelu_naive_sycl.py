"""Naive SYCL candidate for l1_gelu: one work-item per element, tanh-form GELU."""

import torch
from torch import nn

from kernelwright.tools.backends import sycl

SRC = r"""
#include <sycl/sycl.hpp>
namespace syclexp = sycl::ext::oneapi::experimental;

extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))
void gelu_tanh(const float* x, float* y, int n) {
    size_t i = sycl::ext::oneapi::this_work_item::get_nd_item<1>().get_global_id(0);
    if (i >= (size_t)n) return;
    float v = x[i];
    float inner = 0.7978845608028654f * (v + 0.044715f * v * v * v);
    y[i] = 0.5f * v * (1.0f + sycl::tanh(inner));
}
"""

WG = 256


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.kernels = sycl.load_inline(SRC)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        groups = (n + WG - 1) // WG
        self.kernels.gelu_tanh(x, y, n, global_size=(groups * WG,), local_size=(WG,))
        return y
