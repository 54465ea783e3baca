"""Lowering test task (family: gemm in float16 storage (float compute) and in double)."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, a, b, c, d):
        return (a @ b).relu(), torch.bmm(c, d) + 1.0


def get_inputs():
    return [torch.randn(21, 40).half(), torch.randn(40, 35).half(),
            torch.randn(2, 19, 41, dtype=torch.float64),
            torch.randn(2, 41, 23, dtype=torch.float64)]


def get_init_inputs():
    return []
