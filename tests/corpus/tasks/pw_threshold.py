"""Pointwise: Threshold (values <= 0.1 replaced by -2)."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.threshold(x, 0.1, -2.0)


def get_inputs():
    return [torch.randn(65, 1537)]


def get_init_inputs():
    return []
