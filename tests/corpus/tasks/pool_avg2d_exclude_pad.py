"""Pooling: AvgPool2d 3x3, stride 1, padding 1, count_include_pad=False (edge divisors vary)."""

import torch
from torch import nn

FAMILY = "pooling"


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=3, stride=1, padding=1, count_include_pad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(4, 15, 33, 35)]


def get_init_inputs():
    return []
