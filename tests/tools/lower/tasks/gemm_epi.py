"""Lowering test task (family: gemm_epi)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(37, 29)

    def forward(self, x):
        return torch.nn.functional.gelu(self.fc(x)) * 0.5


def get_inputs():
    return [torch.randn(13, 37)]


def get_init_inputs():
    return []
