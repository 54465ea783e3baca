"""Pointwise: a * b + c with three-way broadcasting (17x1x255, 1x63x255, 255)."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return a * b + c


def get_inputs():
    return [torch.randn(17, 1, 255), torch.randn(1, 63, 255), torch.randn(255)]


def get_init_inputs():
    return []
