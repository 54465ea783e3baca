"""L1: RMS normalisation (as in LLaMA-style blocks): x / sqrt(mean(x^2) + eps) * weight."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, features: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * inv_rms * self.weight


def get_inputs():
    return [torch.randn(4096, 1024)]


def get_init_inputs():
    return [1024]
