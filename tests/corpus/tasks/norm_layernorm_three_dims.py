"""Norm: LayerNorm over the three trailing dimensions (13 x 17 x 19), affine.

A row-norm over the last dimension only is wrong here: statistics cover 4199 elements.
"""

import torch
from torch import nn

FAMILY = "norm"


class Model(nn.Module):
    def __init__(self, shape: tuple[int, int, int]) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(shape)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(shape))
            self.norm.bias.copy_(0.1 * torch.randn(shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(6, 13, 17, 19)]


def get_init_inputs():
    return [(13, 17, 19)]
