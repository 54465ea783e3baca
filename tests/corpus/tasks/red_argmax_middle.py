"""Reduction: argmax over the middle dimension (int64 output)."""

import torch
from torch import nn

FAMILY = "reduction"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=1)


def get_inputs():
    return [torch.randn(15, 257, 63)]


def get_init_inputs():
    return []
