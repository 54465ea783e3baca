"""Conv + epilogue: Conv2d, AvgPool2d, sigmoid, sum over channels and space (one value per
sample)."""

import torch
from torch import nn

FAMILY = "conv_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.pool = nn.AvgPool2d(3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.sigmoid(self.pool(self.conv(x)))
        return torch.sum(y, dim=(1, 2, 3))


def get_inputs():
    return [torch.randn(5, 3, 41, 43)]


def get_init_inputs():
    return []
