"""Pointwise: tanh on a 5-D tensor."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x)


def get_inputs():
    return [torch.randn(3, 5, 7, 11, 131)]


def get_init_inputs():
    return []
