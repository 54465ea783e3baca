"""Conv: depthwise Conv2d (29 channels, one filter each), 5x5, padding 2."""

import torch
from torch import nn

FAMILY = "conv"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 5, padding=2, groups=channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(3, 29, 33, 35)]


def get_init_inputs():
    return [29]
