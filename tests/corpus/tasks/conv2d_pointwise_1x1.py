"""Conv: 1x1 Conv2d (32 -> 48), a GEMM over pixels in disguise."""

import torch
from torch import nn

FAMILY = "conv"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(32, 48, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(2, 32, 27, 29)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_pixel_row": [(1, 32, 1, 31)], "three": [(3, 32, 13, 11)]}
