"""Pointwise: GELU, tanh approximation."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(33, 3001)]


def get_init_inputs():
    return []
