"""Norm: BatchNorm1d in training mode on a 2-D batch (statistics over the batch dimension)."""

import torch
from torch import nn

FAMILY = "norm"


class Model(nn.Module):
    def __init__(self, features: int) -> None:
        super().__init__()
        self.norm = nn.BatchNorm1d(features, eps=1e-3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(33, 129)]


def get_init_inputs():
    return [129]
