"""GEMM: a tall, skinny product (4099 x 33) @ (33 x 65)."""

import torch
from torch import nn

FAMILY = "gemm"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.mm(a, b)


def get_inputs():
    return [torch.randn(4099, 33), torch.randn(33, 65)]


def get_init_inputs():
    return []
