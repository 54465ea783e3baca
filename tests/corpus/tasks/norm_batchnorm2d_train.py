"""Norm: BatchNorm2d in training mode (batch statistics over N, H, W)."""

import torch
from torch import nn

FAMILY = "norm"


class Model(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.norm = nn.BatchNorm2d(channels)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(channels))
            self.norm.bias.copy_(0.1 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(6, 23, 15, 17) * 1.5 + 0.3]


def get_init_inputs():
    return [23]
