"""GEMM + epilogue: Linear (767 -> 1001) then softmax over the outputs; vendor GEMM allowed."""

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
        return torch.softmax(self.fc(x), dim=1)


def get_inputs():
    return [torch.randn(33, 767)]


def get_init_inputs():
    return [767, 1001]
