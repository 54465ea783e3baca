"""Lowering test task (family: gemm, 4-D batched matmul with a transposed operand and a
residual epilogue)."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, a, b, r):
        return torch.matmul(a, b.transpose(-1, -2)) * 0.5 + r


def get_inputs():
    return [torch.randn(2, 3, 17, 29), torch.randn(2, 3, 31, 29), torch.randn(2, 3, 17, 31)]


def get_init_inputs():
    return []
