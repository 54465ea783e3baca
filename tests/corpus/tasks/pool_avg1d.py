"""Pooling: AvgPool1d with kernel 5, stride 3, padding 2 (padding counted in the mean)."""

import torch
from torch import nn

FAMILY = "pooling"


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size=5, stride=3, padding=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(7, 11, 301)]


def get_init_inputs():
    return []
