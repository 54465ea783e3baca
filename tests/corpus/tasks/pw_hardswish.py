"""Pointwise: HardSwish, x * relu6(x + 3) / 6."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.hardswish(x)


def get_inputs():
    return [torch.randn(129, 1021) * 3.0]


def get_init_inputs():
    return []
