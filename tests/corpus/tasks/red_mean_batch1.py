"""Reduction: mean over a long middle dimension with batch 1 (1 x 4097 x 33)."""

import torch
from torch import nn

FAMILY = "reduction"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=1)


def get_inputs():
    return [torch.randn(1, 4097, 33)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"short": [(1, 129, 33)], "batch3": [(3, 1001, 7)]}
