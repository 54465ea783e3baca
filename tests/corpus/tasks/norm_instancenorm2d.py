"""Norm: InstanceNorm2d with affine parameters (per sample and channel statistics)."""

import torch
from torch import nn

FAMILY = "norm"


class Model(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.norm = nn.InstanceNorm2d(channels, affine=True)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(channels))
            self.norm.bias.copy_(0.1 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(4, 19, 29, 31)]


def get_init_inputs():
    return [19]
