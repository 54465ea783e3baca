"""Pointwise: CELU (alpha 1.3) on a 3-D tensor of primes."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.celu(x, alpha=1.3)


def get_inputs():
    return [torch.randn(41, 43, 47)]


def get_init_inputs():
    return []
