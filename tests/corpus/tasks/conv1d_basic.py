"""Conv: Conv1d 7 -> 19 channels, kernel 5, no padding."""

import torch
from torch import nn

FAMILY = "conv"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv1d(7, 19, kernel_size=5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(4, 7, 257)]


def get_init_inputs():
    return []
