"""Pooling: MaxPool1d kernel 3, stride 1 over one long single-channel signal (batch 1)."""

import torch
from torch import nn

FAMILY = "pooling"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.max_pool1d(x, kernel_size=3, stride=1)


def get_inputs():
    return [torch.randn(1, 1, 8191)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"short": [(1, 1, 5)], "batched": [(3, 2, 1001)]}
