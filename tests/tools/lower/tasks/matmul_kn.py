"""Lowering test task (family: gemm with B stored K x N, odd sizes, a fused epilogue)."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.relu(a @ b) + 1.0


def get_inputs():
    return [torch.randn(2, 19, 23), torch.randn(23, 37)]


def get_init_inputs():
    return []
