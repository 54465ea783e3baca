"""Reduction: sum over the last dimension, keepdim (129 x 4099)."""

import torch
from torch import nn

FAMILY = "reduction"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=-1, keepdim=True)


def get_inputs():
    return [torch.randn(129, 4099)]


def get_init_inputs():
    return []
