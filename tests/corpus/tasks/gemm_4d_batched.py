"""GEMM: 4-D batched matmul (2 x 3 batches of 33 x 65 @ 65 x 31)."""

import torch
from torch import nn

FAMILY = "gemm"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(2, 3, 33, 65), torch.randn(2, 3, 65, 31)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_batch": [(1, 1, 7, 65), (1, 1, 65, 31)], "odd": [(3, 2, 17, 9), (3, 2, 9, 5)]}
