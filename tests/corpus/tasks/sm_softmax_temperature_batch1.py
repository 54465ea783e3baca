"""Softmax with a temperature on one long row (batch 1)."""

import torch
from torch import nn

FAMILY = "softmax"


class Model(nn.Module):
    def __init__(self, temperature: float) -> None:
        super().__init__()
        self.temperature = temperature

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x / self.temperature, dim=-1)


def get_inputs():
    return [torch.randn(1, 16381)]


def get_init_inputs():
    return [0.37]


def get_shape_variants():
    return {"short_row": [(1, 33)], "five_rows": [(5, 3001)]}
