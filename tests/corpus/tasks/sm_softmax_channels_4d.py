"""Softmax over the channel dimension of a 4-D map (19 channels, odd spatial sizes)."""

import torch
from torch import nn

FAMILY = "softmax"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(2, 19, 33, 35)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_small": [(1, 19, 1, 7)], "three": [(3, 19, 17, 12)]}
