"""Pooling: MaxPool3d 3x3x3, stride 2, padding 1 on a 5-D volume."""

import torch
from torch import nn

FAMILY = "pooling"


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size=3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(2, 5, 17, 19, 21)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_small": [(1, 5, 3, 4, 5)], "three": [(3, 5, 9, 8, 11)]}
