"""Conv: ConvTranspose2d with 3 groups (12 -> 18) and dilation 2."""

import torch
from torch import nn

FAMILY = "conv"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.ConvTranspose2d(12, 18, 3, groups=3, dilation=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(2, 12, 15, 21)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_small": [(1, 12, 5, 7)], "three": [(3, 12, 9, 10)]}
