"""Reduction: sum of every element of a 3-D tensor (0-d output)."""

import torch
from torch import nn

FAMILY = "reduction"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum()


def get_inputs():
    return [torch.randn(63, 65, 67)]


def get_init_inputs():
    return []
