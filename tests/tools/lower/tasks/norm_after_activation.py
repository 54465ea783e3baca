"""Lowering test task (family: norms whose source is a costly activation): a group norm of
two channels per group after Mish, a group norm over odd spatial rows after SiLU, and a layer
norm after GELU whose rows (6 x 4100 floats) are too long to stage."""

import torch
from torch import nn
from torch.nn import functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pairs = nn.GroupNorm(5, 10)
        self.spatial = nn.GroupNorm(2, 6)
        self.long = nn.LayerNorm([6, 4100])

    def forward(self, x, y, z):
        a = self.pairs(F.mish(x * 1.5 + 0.25))
        b = self.spatial(F.silu(y) - 0.5)
        c = self.long(F.gelu(z))
        return a, b, c


def get_inputs():
    return [torch.randn(7, 10), torch.randn(3, 6, 5, 7), torch.randn(2, 6, 4100)]


def get_init_inputs():
    return []
