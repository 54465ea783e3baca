"""Reduction: amax over the first and last dimensions of a 3-D tensor (output keeps dim 1)."""

import torch
from torch import nn

FAMILY = "reduction"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(x, dim=(0, 2))


def get_inputs():
    return [torch.randn(31, 129, 17)]


def get_init_inputs():
    return []
