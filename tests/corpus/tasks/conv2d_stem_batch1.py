"""Conv: a 7x7 stride-2 stem convolution on one image (batch 1)."""

import torch
from torch import nn

FAMILY = "conv"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 13, 7, stride=2, padding=3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(1, 3, 97, 101)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"small_image": [(1, 3, 33, 35)], "two_images": [(2, 3, 41, 39)]}
