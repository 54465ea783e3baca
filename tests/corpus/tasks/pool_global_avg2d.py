"""Pooling: AdaptiveAvgPool2d to 1x1 (global average) followed by flatten."""

import torch
from torch import nn

FAMILY = "pooling"


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flatten(self.pool(x), 1)


def get_inputs():
    return [torch.randn(6, 37, 27, 29)]


def get_init_inputs():
    return []
