"""Norm: InstanceNorm1d without affine parameters on a 3-D sequence batch."""

import torch
from torch import nn

FAMILY = "norm"


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.InstanceNorm1d(33)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(7, 33, 257) * 2.0]


def get_init_inputs():
    return []
