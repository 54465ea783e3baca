"""Reduction: sum over the middle dimension of a 3-D tensor (strided reduction)."""

import torch
from torch import nn

FAMILY = "reduction"


class Model(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim)


def get_inputs():
    return [torch.randn(17, 513, 65)]


def get_init_inputs():
    return [1]
