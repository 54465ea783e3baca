"""GEMM: einsum("bij,jk->bik"), a batch of matrices times one shared matrix (j is tied)."""

import torch
from torch import nn

FAMILY = "gemm"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bij,jk->bik", a, b)


def get_inputs():
    return [torch.randn(3, 37, 70), torch.randn(70, 45)]


def get_init_inputs():
    return []
