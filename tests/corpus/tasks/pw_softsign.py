"""Pointwise: Softsign, x / (1 + |x|)."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / (1 + torch.abs(x))


def get_inputs():
    return [torch.randn(999, 101)]


def get_init_inputs():
    return []
