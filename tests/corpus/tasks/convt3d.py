"""Conv: ConvTranspose3d 6 -> 4, 3x3x3, stride 2, padding 1 on a 5-D volume."""

import torch
from torch import nn

FAMILY = "conv"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.ConvTranspose3d(6, 4, 3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(2, 6, 7, 9, 11)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_small": [(1, 6, 3, 5, 4)], "three": [(3, 6, 5, 4, 7)]}
