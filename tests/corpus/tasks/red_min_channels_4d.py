"""Reduction: min over the channel dimension of a 4-D map, keepdim."""

import torch
from torch import nn

FAMILY = "reduction"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.min(x, dim=1, keepdim=True)[0]


def get_inputs():
    return [torch.randn(4, 37, 29, 31)]


def get_init_inputs():
    return []
