"""Conv: grouped Conv2d (4 groups, 24 -> 36 channels), 3x3, padding 1."""

import torch
from torch import nn

FAMILY = "conv"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(24, 36, 3, padding=1, groups=4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(2, 24, 29, 31)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_small": [(1, 24, 9, 7)], "three": [(3, 24, 15, 20)]}
