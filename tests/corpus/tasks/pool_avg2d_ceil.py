"""Pooling: AvgPool2d 4x4, stride 3, ceil_mode on sizes that leave partial windows."""

import torch
from torch import nn

FAMILY = "pooling"


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=4, stride=3, ceil_mode=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(3, 6, 47, 50)]


def get_init_inputs():
    return []
