"""Norm: LayerNorm without affine parameters on a 3-D tensor, eps 1e-6."""

import torch
from torch import nn

FAMILY = "norm"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.layer_norm(x, (x.shape[-1],), eps=1e-6)


def get_inputs():
    return [torch.randn(2, 77, 513) * 3.0 - 1.0]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_row": [(1, 1, 513)], "odd": [(3, 31, 97)]}
