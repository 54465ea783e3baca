"""Conv + epilogue: Conv2d, ReLU, then a learned per-channel bias added."""

import torch
from torch import nn

FAMILY = "conv_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3)
        self.bias = nn.Parameter(0.1 * torch.randn(cout, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x)) + self.bias


def get_inputs():
    return [torch.randn(3, 5, 31, 33)]


def get_init_inputs():
    return [5, 14]
