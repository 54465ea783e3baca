"""Naive SYCL candidate for l2_scaled_matmul_softmax: a scores kernel, then a row softmax."""

import torch
from torch import nn

from kernelwright.tools.backends import sycl

SRC = r"""
#include <sycl/sycl.hpp>
namespace syclexp = sycl::ext::oneapi::experimental;

// scores[b, i, j] = scale * sum_d q[b, i, d] * k[b, j, d]
extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))
void scores(const float* q, const float* k, float* s, int batch, int lq, int lk, int d,
            float scale) {
    size_t i = sycl::ext::oneapi::this_work_item::get_nd_item<1>().get_global_id(0);
    if (i >= (size_t)batch * lq * lk) return;
    size_t b = i / ((size_t)lq * lk), rem = i % ((size_t)lq * lk);
    size_t row = rem / lk, col = rem % lk;
    const float* qr = q + (b * lq + row) * d;
    const float* kr = k + (b * lk + col) * d;
    float acc = 0.0f;
    for (int p = 0; p < d; ++p) acc += qr[p] * kr[p];
    s[i] = acc * scale;
}

extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))
void row_softmax(float* s, int rows, int cols) {
    size_t r = sycl::ext::oneapi::this_work_item::get_nd_item<1>().get_global_id(0);
    if (r >= (size_t)rows) return;
    float* sr = s + r * cols;
    float m = -std::numeric_limits<float>::infinity();
    for (int j = 0; j < cols; ++j) m = sycl::fmax(m, sr[j]);
    float t = 0.0f;
    for (int j = 0; j < cols; ++j) { float e = sycl::exp(sr[j] - m); sr[j] = e; t += e; }
    float inv = 1.0f / t;
    for (int j = 0; j < cols; ++j) sr[j] *= inv;
}
"""

WG = 64


def _groups(n: int) -> int:
    return (n + WG - 1) // WG * WG


class ModelNew(nn.Module):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = scale
        self.kernels = sycl.load_inline(SRC)

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        q, k = q.contiguous(), k.contiguous()
        batch, lq, d = q.shape
        lk = k.shape[1]
        s = torch.empty((batch, lq, lk), dtype=q.dtype)
        self.kernels.scores(
            q, k, s, batch, lq, lk, d, float(self.scale),
            global_size=(_groups(batch * lq * lk),), local_size=(WG,),
        )
        self.kernels.row_softmax(s, batch * lq, lk, global_size=(_groups(batch * lq),),
                                 local_size=(WG,))
        return s
