"""Conv + epilogue: Conv2d, BatchNorm2d in training mode, ReLU."""

import torch
from torch import nn

FAMILY = "conv_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(6, 11, 3, padding=1)
        self.norm = nn.BatchNorm2d(11)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(4, 6, 23, 25)]


def get_init_inputs():
    return []
