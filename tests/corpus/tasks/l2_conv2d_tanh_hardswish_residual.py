"""Conv + epilogue: Conv2d, tanh, HardSwish, residual add of the conv output, channel sum."""

import torch
from torch import nn

FAMILY = "conv_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(7, 13, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        z = nn.functional.hardswish(torch.tanh(y)) + y
        return z.sum(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(2, 7, 27, 29)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_small": [(1, 7, 9, 5)], "three": [(3, 7, 15, 16)]}
