"""Conv + epilogue: Conv2d, GroupNorm, scale, MaxPool2d, clamp."""

import torch
from torch import nn

FAMILY = "conv_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3)
        self.norm = nn.GroupNorm(4, 16)
        self.scale = nn.Parameter(1.0 + 0.2 * torch.randn(16, 1, 1))
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm(self.conv(x)) * self.scale
        return torch.clamp(self.pool(y), 0.0, 1.0)


def get_inputs():
    return [torch.randn(3, 3, 33, 35)]


def get_init_inputs():
    return []
