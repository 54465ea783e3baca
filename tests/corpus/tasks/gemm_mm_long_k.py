"""GEMM: a long reduction dimension (31 x 4097) @ (4097 x 37)."""

import torch
from torch import nn

FAMILY = "gemm"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.mm(a, b)


def get_inputs():
    return [torch.randn(31, 4097), torch.randn(4097, 37)]


def get_init_inputs():
    return []
