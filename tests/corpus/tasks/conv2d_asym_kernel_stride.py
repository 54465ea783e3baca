"""Conv: Conv2d with a 3x5 kernel, padding (1, 2), stride (2, 1)."""

import torch
from torch import nn

FAMILY = "conv"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(11, 23, (3, 5), stride=(2, 1), padding=(1, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(3, 11, 31, 37)]


def get_init_inputs():
    return []
