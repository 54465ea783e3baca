"""GEMM: A^T @ B^T with A (K x M) and B (N x K): K ties A's dim 0 to B's dim 1 (KernelBench
level 1's "matmul with transposed both"; scaling the leading dimensions cannot vary it)."""

import torch
from torch import nn

FAMILY = "gemm"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a.T, b.T)


def get_inputs():
    return [torch.randn(129, 97), torch.randn(83, 129)]


def get_init_inputs():
    return []
