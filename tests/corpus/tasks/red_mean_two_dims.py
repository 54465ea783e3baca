"""Reduction: mean over two non-adjacent dimensions (1 and 3) of a 4-D tensor, keepdim."""

import torch
from torch import nn

FAMILY = "reduction"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=(1, 3), keepdim=True)


def get_inputs():
    return [torch.randn(7, 33, 19, 41)]


def get_init_inputs():
    return []
