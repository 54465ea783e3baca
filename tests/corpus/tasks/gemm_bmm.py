"""GEMM: batched product of 7 pairs (63 x 129) @ (129 x 65)."""

import torch
from torch import nn

FAMILY = "gemm"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(7, 63, 129), torch.randn(7, 129, 65)]


def get_init_inputs():
    return []
