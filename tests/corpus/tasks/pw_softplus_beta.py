"""Pointwise: Softplus with beta=2 and a low threshold, so both branches are exercised."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def __init__(self, beta: float, threshold: float) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.softplus(x, beta=self.beta, threshold=self.threshold)


def get_inputs():
    return [torch.randn(63, 4097) * 3.0]


def get_init_inputs():
    return [2.0, 4.0]
