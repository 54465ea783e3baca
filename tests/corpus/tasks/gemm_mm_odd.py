"""GEMM: (255 x 257) @ (257 x 253), no size a multiple of a tile."""

import torch
from torch import nn

FAMILY = "gemm"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(255, 257), torch.randn(257, 253)]


def get_init_inputs():
    return []
