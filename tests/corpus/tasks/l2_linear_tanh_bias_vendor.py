"""GEMM + epilogue: Linear (1025 -> 257), tanh, scale 2.5, an extra learned bias; vendor
GEMM allowed."""

import torch
from torch import nn

FAMILY = "gemm_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}
ALLOWED_SPACES = ["custom_kernel", "vendor_library"]


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(0.1 * torch.randn(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.fc(x)) * 2.5 + self.bias


def get_inputs():
    return [torch.randn(191, 1025)]


def get_init_inputs():
    return [1025, 257]
