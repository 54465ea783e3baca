"""Norm: RMSNorm over the channel dimension of a 4-D map (a middle-dimension reduction)."""

import torch
from torch import nn

FAMILY = "norm"


class Model(nn.Module):
    def __init__(self, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.sqrt(torch.mean(x**2, dim=1, keepdim=True) + self.eps)
        return x / rms


def get_inputs():
    return [torch.randn(5, 33, 19, 23)]


def get_init_inputs():
    return []
