"""Scan: cumulative sum down the columns (dimension 0) of a row-major matrix."""

import torch
from torch import nn

FAMILY = "scan"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=0)


def get_inputs():
    return [torch.randn(511, 129)]


def get_init_inputs():
    return []
