"""Scan: cumulative sum of only the elements a boolean mask keeps."""

import torch
from torch import nn

FAMILY = "scan"


class Model(nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=1)


def get_inputs():
    return [torch.randn(63, 1999), torch.rand(63, 1999) < 0.6]


def get_init_inputs():
    return []
