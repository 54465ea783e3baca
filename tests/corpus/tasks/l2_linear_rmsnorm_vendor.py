"""GEMM + epilogue: Linear (639 -> 385) then RMSNorm with a learned scale; vendor GEMM
allowed."""

import torch
from torch import nn

FAMILY = "gemm_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}
ALLOWED_SPACES = ["custom_kernel", "vendor_library"]


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        return y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


def get_inputs():
    return [torch.randn(161, 639)]


def get_init_inputs():
    return [639, 385]
