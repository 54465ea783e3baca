"""Lowering test task (family: convt)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.d = nn.Conv1d(6, 6, 5, padding=2, dilation=1, groups=6)
        self.e = nn.Conv3d(
            2, 3, (2, 3, 3), stride=(1, 2, 1), padding=(0, 1, 1), dilation=(1, 1, 2)
        )

    def forward(self, x, y, z):
        return self.c(x), self.d(y), self.e(z)


def get_inputs():
    return [torch.randn(3, 4, 5, 7), torch.randn(3, 6, 19), torch.randn(3, 2, 4, 7, 9)]


def get_init_inputs():
    return []
