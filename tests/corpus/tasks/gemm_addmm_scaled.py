"""GEMM: addmm with beta 0.5 and alpha 2, bias broadcast over rows."""

import torch
from torch import nn

FAMILY = "gemm"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def forward(self, bias: torch.Tensor, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.addmm(bias, x, w, beta=0.5, alpha=2.0)


def get_inputs():
    return [torch.randn(253), torch.randn(129, 255), torch.randn(255, 253)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"few_rows": [(253,), (17, 255), (255, 253)], "odd_n": [(31,), (65, 255), (255, 31)]}
