"""Pointwise: HardSigmoid on a 2-D tensor."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.hardsigmoid(x)


def get_inputs():
    return [torch.randn(513, 257) * 4.0]


def get_init_inputs():
    return []
