"""Conv: Conv3d 3 -> 8 channels, 3x3x3, on a 13 x 15 x 17 volume."""

import torch
from torch import nn

FAMILY = "conv"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv3d(3, 8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(2, 3, 13, 15, 17)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_small": [(1, 3, 5, 7, 9)], "three": [(3, 3, 9, 8, 11)]}
