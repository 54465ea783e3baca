"""GEMM + epilogue: Linear (511 -> 255), logsumexp over features (keepdim), LeakyReLU twice."""

import torch
from torch import nn

FAMILY = "gemm_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.logsumexp(self.fc(x), dim=1, keepdim=True)
        y = nn.functional.leaky_relu(y, 0.01)
        return nn.functional.leaky_relu(y, 0.01)


def get_inputs():
    return [torch.randn(129, 511)]


def get_init_inputs():
    return [511, 255]
