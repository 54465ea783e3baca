"""Reduction: argmin over the last dimension (int64 output)."""

import torch
from torch import nn

FAMILY = "reduction"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmin(x, dim=-1)


def get_inputs():
    return [torch.randn(511, 301)]


def get_init_inputs():
    return []
