"""Layout: strided slicing x[:, 1:-2:3, ::2] followed by a scale."""

import torch
from torch import nn

FAMILY = "layout"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, 1:-2:3, ::2] * 1.5


def get_inputs():
    return [torch.randn(33, 257, 65)]


def get_init_inputs():
    return []
