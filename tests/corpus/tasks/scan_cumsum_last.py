"""Scan: inclusive cumulative sum along the last dimension (rows of 4001)."""

import torch
from torch import nn

FAMILY = "scan"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=-1)


def get_inputs():
    return [torch.randn(127, 4001)]


def get_init_inputs():
    return []
