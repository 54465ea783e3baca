"""Norm: LayerNorm over the last dimension with a non-identity affine part."""

import torch
from torch import nn

FAMILY = "norm"


class Model(nn.Module):
    def __init__(self, features: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(features)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(features))
            self.norm.bias.copy_(0.1 * torch.randn(features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(63, 1001) * 2.0 + 0.5]


def get_init_inputs():
    return [1001]
