"""Pointwise: LogSigmoid (numerically stable form needed for large |x|)."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.logsigmoid(x)


def get_inputs():
    return [torch.randn(301, 307) * 8.0]


def get_init_inputs():
    return []
