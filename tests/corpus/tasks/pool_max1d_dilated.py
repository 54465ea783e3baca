"""Pooling: MaxPool1d with kernel 4, stride 2, padding 1, dilation 2."""

import torch
from torch import nn

FAMILY = "pooling"


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size=4, stride=2, padding=1, dilation=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(5, 17, 257)]


def get_init_inputs():
    return []
