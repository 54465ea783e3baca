"""Scan: cumulative sum of one long row (batch 1; a single scan that must be split)."""

import torch
from torch import nn

FAMILY = "scan"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=1)


def get_inputs():
    return [torch.randn(1, 65537) * 0.1]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"short": [(1, 37)], "four_rows": [(4, 10007)]}
