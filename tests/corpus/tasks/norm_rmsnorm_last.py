"""Norm: RMSNorm over the last dimension with a learned scale (LLaMA style)."""

import torch
from torch import nn

FAMILY = "norm"


class Model(nn.Module):
    def __init__(self, features: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


def get_inputs():
    return [torch.randn(127, 1023)]


def get_init_inputs():
    return [1023]
