"""Pointwise: sigmoid on a tall, narrow tensor (4093 x 31)."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x)


def get_inputs():
    return [torch.randn(4093, 31) * 4.0]


def get_init_inputs():
    return []
