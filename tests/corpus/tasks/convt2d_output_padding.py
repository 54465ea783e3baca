"""Conv: ConvTranspose2d 13 -> 9, 3x3, stride 2, padding 1, output_padding 1."""

import torch
from torch import nn

FAMILY = "conv"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.ConvTranspose2d(13, 9, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(2, 13, 17, 19)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_small": [(1, 13, 5, 3)], "three": [(3, 13, 10, 11)]}
