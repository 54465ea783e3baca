"""L1: materialised transpose of a matrix (a pure data-layout change)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.t().contiguous()


def get_inputs():
    return [torch.randn(1024, 2048)]


def get_init_inputs():
    return []
