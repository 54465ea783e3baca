"""Conv: dilated Conv2d (dilation 2, padding 2) without bias."""

import torch
from torch import nn

FAMILY = "conv"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(9, 15, 3, dilation=2, padding=2, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(2, 9, 37, 39)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_small": [(1, 9, 11, 13)], "three": [(3, 9, 20, 31)]}
