"""L1: GELU (tanh approximation) applied elementwise to a 2-D activation tensor."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(256, 4096)]


def get_init_inputs():
    return []
