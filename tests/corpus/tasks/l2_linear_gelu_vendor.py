"""GEMM + epilogue: Linear (1023 -> 511) then GELU; a vendor GEMM is allowed."""

import torch
from torch import nn

FAMILY = "gemm_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}
ALLOWED_SPACES = ["custom_kernel", "vendor_library"]


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.gelu(self.fc(x))


def get_inputs():
    return [torch.randn(255, 1023)]


def get_init_inputs():
    return [1023, 511]
