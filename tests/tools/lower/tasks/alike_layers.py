"""Lowering test task (family: alike_layers): an unrolled recurrence, one GEMM shape three times,
then a head of another shape (shared kernels, the space chosen once for alike groups)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.steps = nn.ModuleList(nn.Linear(32, 32) for _ in range(3))
        self.head = nn.Linear(32, 16)

    def forward(self, x):
        for step in self.steps:
            x = torch.relu(step(x))
        return self.head(x)


def get_inputs():
    return [torch.randn(24, 32)]


def get_init_inputs():
    return []
