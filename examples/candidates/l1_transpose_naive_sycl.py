"""Naive SYCL candidate for l1_transpose: one work-item per element, reads along rows."""

import torch
from torch import nn

from kernelwright.tools.backends import sycl

SRC = r"""
#include <sycl/sycl.hpp>
namespace syclexp = sycl::ext::oneapi::experimental;

extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))
void transpose(const float* x, float* y, int rows, int cols) {
    size_t i = sycl::ext::oneapi::this_work_item::get_nd_item<1>().get_global_id(0);
    if (i >= (size_t)rows * cols) return;
    size_t r = i / cols, c = i % cols;
    y[c * rows + r] = x[i];
}
"""

WG = 256


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.kernels = sycl.load_inline(SRC)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty((cols, rows), dtype=x.dtype)
        groups = (rows * cols + WG - 1) // WG
        self.kernels.transpose(x, y, rows, cols, global_size=(groups * WG,), local_size=(WG,))
        return y
