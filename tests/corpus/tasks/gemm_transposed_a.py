"""GEMM: A^T @ B with A stored (257 x 129): the operand is read transposed."""

import torch
from torch import nn

FAMILY = "gemm"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a.t(), b)


def get_inputs():
    return [torch.randn(257, 129), torch.randn(257, 191)]


def get_init_inputs():
    return []
