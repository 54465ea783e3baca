"""Reduction: min values over the last dimension of a tall tensor."""

import torch
from torch import nn

FAMILY = "reduction"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.min(x, dim=-1)[0]


def get_inputs():
    return [torch.randn(1021, 127)]


def get_init_inputs():
    return []
