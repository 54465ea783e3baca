"""Lowering test task (family: scan)."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x, m):
        return torch.cumsum(x.flip(1) * m, dim=1).flip(1), torch.cumprod(x, 0)


def get_inputs():
    return [torch.randn(6, 37), torch.rand(6, 37) > 0.5]


def get_init_inputs():
    return []
