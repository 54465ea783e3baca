"""Norm: BatchNorm3d in training mode on a 5-D volume."""

import torch
from torch import nn

FAMILY = "norm"


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.BatchNorm3d(7)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(3, 7, 9, 11, 13)]


def get_init_inputs():
    return []
