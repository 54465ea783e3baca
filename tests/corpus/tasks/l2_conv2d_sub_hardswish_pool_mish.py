"""Conv + epilogue: Conv2d, subtract a constant, HardSwish, MaxPool2d, Mish."""

import torch
from torch import nn

FAMILY = "conv_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self, subtract: float) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 12, 3)
        self.subtract = subtract
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = nn.functional.hardswish(self.conv(x) - self.subtract)
        return nn.functional.mish(self.pool(y))


def get_inputs():
    return [torch.randn(4, 3, 31, 29)]


def get_init_inputs():
    return [0.4]
