"""Lowering test task (family: layernorm3)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm((5, 6, 7))

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(4, 5, 6, 7)]


def get_init_inputs():
    return []
