"""Conv: ConvTranspose1d 11 -> 7, kernel 4, stride 2, padding 1 (2x upsampling)."""

import torch
from torch import nn

FAMILY = "conv"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.ConvTranspose1d(11, 7, 4, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(3, 11, 129)]


def get_init_inputs():
    return []
