"""Conv + epilogue: Conv3d, softmax over channels, MaxPool3d."""

import torch
from torch import nn

FAMILY = "conv_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv3d(4, 5, 3, padding=1)
        self.pool = nn.MaxPool3d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(torch.softmax(self.conv(x), dim=1))


def get_inputs():
    return [torch.randn(2, 4, 9, 11, 13)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_small": [(1, 4, 3, 5, 7)], "three": [(3, 4, 6, 7, 5)]}
