"""Scan: cumulative sum along the middle dimension of a 3-D tensor (strided scan)."""

import torch
from torch import nn

FAMILY = "scan"


class Model(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=self.dim)


def get_inputs():
    return [torch.randn(9, 513, 17)]


def get_init_inputs():
    return [1]
