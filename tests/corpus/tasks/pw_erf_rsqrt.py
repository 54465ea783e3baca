"""Pointwise: erf(x) * rsqrt(x^2 + 1), two transcendental functions in one pass."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.erf(x) * torch.rsqrt(x * x + 1.0)


def get_inputs():
    return [torch.randn(9, 33, 513)]


def get_init_inputs():
    return []
