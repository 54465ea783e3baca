"""GEMM: matrix-vector product (511 x 2049) @ (2049 x 1)."""

import torch
from torch import nn

FAMILY = "gemm"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def forward(self, a: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, v)


def get_inputs():
    return [torch.randn(511, 2049), torch.randn(2049, 1)]


def get_init_inputs():
    return []
