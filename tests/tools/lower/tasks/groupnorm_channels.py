"""Lowering test task: group norm after a per-channel affine and a sigmoid (l2_21's shape of
work), once with H x W long enough to walk as a loop of its own (9 x 15) and once too short
(3 x 3, merged with the group's channels)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(8, 1, 1))
        self.shift = nn.Parameter(torch.randn(8, 1, 1))
        self.long = nn.GroupNorm(4, 8)
        self.short = nn.GroupNorm(2, 8)

    def forward(self, x, z):
        return (self.long(torch.sigmoid(x * self.scale + self.shift)),
                self.short(torch.sigmoid(z * self.scale + self.shift)))


def get_inputs():
    return [torch.randn(3, 8, 9, 15), torch.randn(3, 8, 3, 3)]


def get_init_inputs():
    return []
