"""Conv + epilogue: Conv3d, GELU, global average pool to one value per channel."""

import torch
from torch import nn

FAMILY = "conv_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv3d(3, 6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = nn.functional.gelu(self.conv(x))
        return nn.functional.adaptive_avg_pool3d(y, 1).flatten(1)


def get_inputs():
    return [torch.randn(2, 3, 11, 13, 15)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_small": [(1, 3, 5, 6, 7)], "three": [(3, 3, 7, 9, 4)]}
