"""Reduction: population standard deviation (correction 0) over the middle dimension."""

import torch
from torch import nn

FAMILY = "reduction"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.std(x, dim=1, correction=0)


def get_inputs():
    return [torch.randn(9, 777, 33)]


def get_init_inputs():
    return []
