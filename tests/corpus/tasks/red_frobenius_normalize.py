"""Reduction: divide a 4-D tensor by its Frobenius norm (a reduction over every dim)."""

import torch
from torch import nn

FAMILY = "reduction"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.norm(x, p="fro")


def get_inputs():
    return [torch.randn(3, 17, 31, 29)]


def get_init_inputs():
    return []
