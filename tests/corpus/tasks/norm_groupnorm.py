"""Norm: GroupNorm with 6 groups of 7 channels on a 4-D map."""

import torch
from torch import nn

FAMILY = "norm"


class Model(nn.Module):
    def __init__(self, groups: int, channels: int) -> None:
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(channels))
            self.norm.bias.copy_(0.1 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(5, 42, 17, 19)]


def get_init_inputs():
    return [6, 42]
