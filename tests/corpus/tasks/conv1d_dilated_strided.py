"""Conv: Conv1d 13 -> 31, kernel 3, stride 2, padding 2, dilation 3."""

import torch
from torch import nn

FAMILY = "conv"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv1d(13, 31, kernel_size=3, stride=2, padding=2, dilation=3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(3, 13, 301)]


def get_init_inputs():
    return []
