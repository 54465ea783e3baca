"""Pooling: MaxPool2d 3x3, stride 2, dilation 2, ceil_mode (partial windows at the edge)."""

import torch
from torch import nn

FAMILY = "pooling"


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, dilation=2, ceil_mode=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(2, 9, 37, 41)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_small": [(1, 9, 7, 8)], "three": [(3, 9, 20, 13)]}
