"""GEMM + epilogue: scaled_dot_product_attention on (batch, heads, tokens, dim) with a key
length of its own (KernelBench's ScaledDotProductAttention pattern; q, k, v dims are tied)."""

import torch
from torch import nn
from torch.nn import functional as F

FAMILY = "gemm_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    return [torch.randn(2, 3, 33, 24), torch.randn(2, 3, 41, 24), torch.randn(2, 3, 41, 24)]


def get_init_inputs():
    return []
