"""Lowering test task (family: scan along the only long line of a batch-1 3-D input, with an
epilogue, and a cumprod along a middle dim)."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x, y):
        return torch.cumsum(x, dim=-1) * 0.5, torch.cumprod(1 + y / 64, dim=1)


def get_inputs():
    return [torch.randn(1, 1, 70001), torch.randn(3, 2049, 5)]


def get_init_inputs():
    return []
