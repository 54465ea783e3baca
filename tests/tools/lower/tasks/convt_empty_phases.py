"""Lowering test task (family: convt): strided transposed convolutions with output phases
that no tap reaches, whose outputs are the bias alone (through the epilogue): stride 2 with
dilation 2 and odd padding (every even position along each dim), a kernel shorter than its
stride (one phase in three), a grouped 1-D one; a transcendental epilogue (SYCL runs it
apart), odd sizes, batch 2."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.ConvTranspose2d(4, 8, 3, stride=2, padding=1, dilation=2)
        self.b = nn.ConvTranspose3d(3, 6, 2, stride=(3, 1, 3))
        self.c = nn.ConvTranspose1d(4, 6, 2, stride=4, padding=1, groups=2)

    def forward(self, x, y, z):
        return torch.sigmoid(self.a(x)), torch.relu(self.b(y)) + 1.0, self.c(z)


def get_inputs():
    return [torch.randn(2, 4, 5, 7), torch.randn(2, 3, 3, 4, 5), torch.randn(2, 4, 9)]


def get_init_inputs():
    return []
