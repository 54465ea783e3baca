"""Conv: Conv3d with a (3, 3, 1) kernel, stride (2, 1, 1), padding (1, 1, 0)."""

import torch
from torch import nn

FAMILY = "conv"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv3d(5, 7, (3, 3, 1), stride=(2, 1, 1), padding=(1, 1, 0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(2, 5, 15, 17, 9)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_small": [(1, 5, 7, 5, 3)], "three": [(3, 5, 10, 9, 8)]}
