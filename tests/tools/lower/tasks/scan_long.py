"""Lowering test task (family: scan): long float prefix sums and products."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=-1), torch.cumprod(1 + x / 64, dim=-1)


def get_inputs():
    return [torch.randn(7, 4001)]


def get_init_inputs():
    return []
