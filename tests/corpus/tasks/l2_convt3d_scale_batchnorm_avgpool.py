"""Conv + epilogue: ConvTranspose3d, scale, BatchNorm3d in training mode, AvgPool3d."""

import torch
from torch import nn

FAMILY = "conv_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.conv = nn.ConvTranspose3d(3, 5, 3, stride=2, padding=1)
        self.scale = scale
        self.norm = nn.BatchNorm3d(5)
        self.pool = nn.AvgPool3d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(self.norm(self.conv(x) * self.scale))


def get_inputs():
    return [torch.randn(2, 3, 5, 7, 9)]


def get_init_inputs():
    return [0.6]


def get_shape_variants():
    return {"one_small": [(1, 3, 3, 5, 4)], "three": [(3, 3, 4, 3, 6)]}
