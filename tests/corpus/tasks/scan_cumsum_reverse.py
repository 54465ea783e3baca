"""Scan: reverse cumulative sum (suffix sums), written with flips."""

import torch
from torch import nn

FAMILY = "scan"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x.flip(-1), dim=-1).flip(-1)


def get_inputs():
    return [torch.randn(129, 2047)]


def get_init_inputs():
    return []
