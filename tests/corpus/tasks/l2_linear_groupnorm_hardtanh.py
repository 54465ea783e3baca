"""GEMM + epilogue: Linear (255 -> 192), GroupNorm (8 groups), HardTanh."""

import torch
from torch import nn

FAMILY = "gemm_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, groups: int) -> None:
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.norm = nn.GroupNorm(groups, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.hardtanh(self.norm(self.fc(x)), -0.8, 0.9)


def get_inputs():
    return [torch.randn(63, 255)]


def get_init_inputs():
    return [255, 192, 8]
