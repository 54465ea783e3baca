"""Reduction: divide each row by its mean absolute value (L1 normalisation, row reduction +
broadcast epilogue)."""

import torch
from torch import nn

FAMILY = "reduction"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.mean(torch.abs(x), dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(129, 2047)]


def get_init_inputs():
    return []
