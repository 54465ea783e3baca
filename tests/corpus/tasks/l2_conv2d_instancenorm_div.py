"""Conv + epilogue: Conv2d, InstanceNorm2d, division by a constant."""

import torch
from torch import nn

FAMILY = "conv_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self, divisor: float) -> None:
        super().__init__()
        self.conv = nn.Conv2d(5, 10, 3)
        self.norm = nn.InstanceNorm2d(10)
        self.divisor = divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.conv(x)) / self.divisor


def get_inputs():
    return [torch.randn(3, 5, 21, 23)]


def get_init_inputs():
    return [1.7]
