"""L2: a dense layer followed by Swish, x @ W^T + b then v * sigmoid(v).

The contract allows vendor libraries: the lowering may run the GEMM on the host BLAS and fuse
bias + Swish into one kernel after it (its plan says which space it chose and why).
"""

import math

import torch
from torch import nn

TOLERANCES = {"float32": (1e-3, 1e-4)}
ALLOWED_SPACES = ["custom_kernel", "vendor_library"]


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / math.sqrt(in_features))
        self.bias = nn.Parameter(0.1 * torch.randn(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        v = x @ self.weight.t() + self.bias
        return v * torch.sigmoid(v)


def get_inputs():
    return [torch.randn(384, 768)]


def get_init_inputs():
    return [768, 1024]
