"""Pointwise: GELU (erf form) on a 4-D activation map with odd spatial sizes."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.act = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(x)


def get_inputs():
    return [torch.randn(2, 7, 61, 67)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_small": [(1, 7, 3, 5)], "three": [(3, 7, 31, 9)]}
