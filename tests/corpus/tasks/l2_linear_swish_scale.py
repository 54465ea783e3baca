"""GEMM + epilogue: Linear (777 -> 333), Swish, then a constant scale."""

import torch
from torch import nn

FAMILY = "gemm_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale: float) -> None:
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        return y * torch.sigmoid(y) * self.scale


def get_inputs():
    return [torch.randn(65, 777)]


def get_init_inputs():
    return [777, 333, 1.7]
