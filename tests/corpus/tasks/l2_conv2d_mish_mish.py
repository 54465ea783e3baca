"""Conv + epilogue: Conv2d followed by Mish applied twice."""

import torch
from torch import nn

FAMILY = "conv_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 9, 5, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.mish(nn.functional.mish(self.conv(x)))


def get_inputs():
    return [torch.randn(3, 4, 45, 47)]


def get_init_inputs():
    return []
