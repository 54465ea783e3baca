"""Pointwise: x (N x M) scaled by a column (N x 1) and shifted by a row (M): both broadcast
partners are tied to x's dims."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def forward(self, x: torch.Tensor, col: torch.Tensor, row: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x * col + row)


def get_inputs():
    return [torch.randn(67, 95), torch.randn(67, 1), torch.randn(95)]


def get_init_inputs():
    return []
