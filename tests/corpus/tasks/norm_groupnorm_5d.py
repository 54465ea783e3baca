"""Norm: GroupNorm on a 5-D volume (4 groups of 3 channels)."""

import torch
from torch import nn

FAMILY = "norm"


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.GroupNorm(4, 12, eps=1e-4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(3, 12, 7, 9, 11) + 1.0]


def get_init_inputs():
    return []
