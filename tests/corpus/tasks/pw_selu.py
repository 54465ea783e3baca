"""Pointwise: SELU on a 2-D tensor whose sizes are not a multiple of any vector width."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.selu(x)


def get_inputs():
    return [torch.randn(257, 515)]


def get_init_inputs():
    return []
