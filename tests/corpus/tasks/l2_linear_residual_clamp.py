"""GEMM + epilogue: square Linear (383 -> 383), residual add of the input, clamp."""

import torch
from torch import nn

FAMILY = "gemm_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self, features: int) -> None:
        super().__init__()
        self.fc = nn.Linear(features, features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(self.fc(x) + x, min=-1.5, max=1.5)


def get_inputs():
    return [torch.randn(97, 383)]


def get_init_inputs():
    return [383]
