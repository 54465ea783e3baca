"""Reduction: max values over the middle dimension."""

import torch
from torch import nn

FAMILY = "reduction"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.max(x, dim=1).values


def get_inputs():
    return [torch.randn(23, 311, 37)]


def get_init_inputs():
    return []
