"""GEMM + epilogue: Linear (255 -> 511), max over features, minus its mean, GELU."""

import torch
from torch import nn

FAMILY = "gemm_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        y = torch.max(y, dim=1, keepdim=True).values
        y = y - y.mean(dim=0, keepdim=True)
        return nn.functional.gelu(y)


def get_inputs():
    return [torch.randn(97, 255)]


def get_init_inputs():
    return [255, 511]
