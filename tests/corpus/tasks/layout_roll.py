"""Layout: roll the last dimension by 7 (a cyclic shift)."""

import torch
from torch import nn

FAMILY = "layout"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.roll(x, shifts=7, dims=-1)


def get_inputs():
    return [torch.randn(17, 1001)]


def get_init_inputs():
    return []
