"""Reduction: unbiased variance over the last dimension of data with a large mean."""

import torch
from torch import nn

FAMILY = "reduction"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.var(x, dim=-1)


def get_inputs():
    return [torch.randn(255, 1001) * 2.0 + 3.0]


def get_init_inputs():
    return []
