"""Lowering test task (family: conv): 3-D convolutions whose out_channels (5, 7) are not a
multiple of the default channel block, so every block size but the largest becomes 1."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv3d(3, 5, 3)
        self.s = nn.Conv3d(5, 7, 3, stride=(2, 1, 1))
        self.t = nn.ConvTranspose3d(3, 5, 3, stride=2, padding=1)

    def forward(self, x, y):
        return self.c(x), self.s(y), self.t(x)


def get_inputs():
    return [torch.randn(2, 3, 5, 6, 7), torch.randn(2, 5, 7, 5, 6)]


def get_init_inputs():
    return []
