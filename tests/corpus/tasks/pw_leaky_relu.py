"""Pointwise: LeakyReLU with a non-default slope on an odd-sized 2-D tensor."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def __init__(self, negative_slope: float) -> None:
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.leaky_relu(x, self.negative_slope)


def get_inputs():
    return [torch.randn(37, 1023)]


def get_init_inputs():
    return [0.013]
