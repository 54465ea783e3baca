"""Pointwise: ELU with alpha=0.7 on a 3-D tensor (3 x 129 x 257)."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def __init__(self, alpha: float) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.elu(x, alpha=self.alpha)


def get_inputs():
    return [torch.randn(3, 129, 257)]


def get_init_inputs():
    return [0.7]
