"""Pointwise: Swish (x * sigmoid(x)) written out by hand on a 3-D tensor with odd sizes."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(5, 17, 999)]


def get_init_inputs():
    return []
