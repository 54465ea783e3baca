"""GEMM: one row times a matrix, (1 x 2049) @ (2049 x 511) (batch 1)."""

import torch
from torch import nn

FAMILY = "gemm"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return x @ w


def get_inputs():
    return [torch.randn(1, 2049), torch.randn(2049, 511)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"narrow": [(1, 2049), (2049, 127)], "three_rows": [(3, 1023), (1023, 511)]}
