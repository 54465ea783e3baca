"""Pointwise: Mish written out, x * tanh(softplus(x))."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.tanh(nn.functional.softplus(x))


def get_inputs():
    return [torch.randn(77, 1999)]


def get_init_inputs():
    return []
