"""GEMM: nn.Linear without bias (weights are a kernel argument)."""

import torch
from torch import nn

FAMILY = "gemm"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def get_inputs():
    return [torch.randn(127, 511)]


def get_init_inputs():
    return [511, 255]
