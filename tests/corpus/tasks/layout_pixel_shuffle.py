"""Layout: pixel shuffle with upscale 3 (view + permute + view)."""

import torch
from torch import nn

FAMILY = "layout"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.pixel_shuffle(x, 3)


def get_inputs():
    return [torch.randn(2, 18, 13, 15)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_small": [(1, 18, 1, 5)], "three": [(3, 18, 7, 4)]}
