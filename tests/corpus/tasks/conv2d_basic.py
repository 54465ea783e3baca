"""Conv: Conv2d 3 -> 17 channels, 3x3, on a 63 x 65 image (RGB stem)."""

import torch
from torch import nn

FAMILY = "conv"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self, cin: int, cout: int, k: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(2, 3, 63, 65)]


def get_init_inputs():
    return [3, 17, 3]


def get_shape_variants():
    return {"one_small": [(1, 3, 17, 23)], "three": [(3, 3, 40, 21)]}
