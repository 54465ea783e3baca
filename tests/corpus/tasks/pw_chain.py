"""Pointwise: a chain of six elementwise ops that fuses into one pass."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = (x * 1.7 - 0.3).clamp(-1.0, 2.0)
        return y * y + torch.exp(-torch.abs(x))


def get_inputs():
    return [torch.randn(127, 2049)]


def get_init_inputs():
    return []
