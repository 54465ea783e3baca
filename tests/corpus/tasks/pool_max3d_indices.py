"""Pooling: MaxPool3d 2x2x2 returning values and indices."""

import torch
from torch import nn

FAMILY = "pooling"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return nn.functional.max_pool3d(x, kernel_size=2, return_indices=True)


def get_inputs():
    return [torch.randn(2, 3, 9, 11, 13)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_small": [(1, 3, 2, 3, 5)], "three": [(3, 3, 5, 8, 7)]}
