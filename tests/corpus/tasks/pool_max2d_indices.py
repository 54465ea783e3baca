"""Pooling: MaxPool2d 2x2 returning values and int64 indices (odd sizes: the last row and
column are dropped)."""

import torch
from torch import nn

FAMILY = "pooling"


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=2, return_indices=True)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = self.pool(x)
        return values, indices


def get_inputs():
    return [torch.randn(3, 7, 31, 33)]


def get_init_inputs():
    return []
