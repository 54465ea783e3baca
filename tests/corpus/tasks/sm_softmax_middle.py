"""Softmax over the middle dimension of a 3-D tensor (strided rows)."""

import torch
from torch import nn

FAMILY = "softmax"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(5, 257, 63)]


def get_init_inputs():
    return []
