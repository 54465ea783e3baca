"""Conv: Conv2d with padding='same' and an even 4x4 kernel (asymmetric implicit padding)."""

import torch
from torch import nn

FAMILY = "conv"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(5, 7, 4, padding="same")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(3, 5, 25, 27)]


def get_init_inputs():
    return []
