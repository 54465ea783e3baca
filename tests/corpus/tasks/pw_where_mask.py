"""Pointwise: select between two tensors under a boolean mask."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def forward(self, mask: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.where(mask, x, 0.5 * y)


def get_inputs():
    return [torch.rand(255, 771) < 0.3, torch.randn(255, 771), torch.randn(255, 771)]


def get_init_inputs():
    return []
