"""GEMM: a 3-D tensor times a shared 2-D matrix, (5 x 63 x 127) @ (127 x 95)."""

import torch
from torch import nn

FAMILY = "gemm"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(5, 63, 127), torch.randn(127, 95)]


def get_init_inputs():
    return []
