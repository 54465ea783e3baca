"""Scan: exclusive cumulative sum (element i holds the sum of elements before i)."""

import torch
from torch import nn

FAMILY = "scan"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shifted = nn.functional.pad(x, (1, 0))[..., :-1]
        return torch.cumsum(shifted, dim=-1)


def get_inputs():
    return [torch.randn(63, 3, 1001)]


def get_init_inputs():
    return []
