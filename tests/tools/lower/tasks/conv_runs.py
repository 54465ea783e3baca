"""Lowering test task (family: conv): convolutions whose im2col columns pack as runs of
the input (wide rows): rows that are no multiple of a panel, padding at both ends, stride 2
forward (runs of step 2), dilation, transposed stride 1 and strided transposed (per phase),
1-D to 3-D, a batch of 2 so runs stop at image ends too, and a convolution of a transposed
view (its runs are not consecutive in memory, so they must not be block copies)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(6, 16, 3, padding=1)
        self.b = nn.Conv2d(6, 16, (2, 3), stride=2, padding=(0, 1))
        self.c = nn.Conv1d(5, 16, 5, padding=2, dilation=2)
        self.d = nn.ConvTranspose2d(6, 16, 3, padding=1)
        self.e = nn.ConvTranspose2d(6, 16, 3, stride=2, padding=1, output_padding=1)
        self.f = nn.ConvTranspose3d(4, 16, 3, stride=(1, 2, 2), padding=1)
        self.g = nn.Conv2d(6, 16, 3)

    def forward(self, x, y, z):
        return (torch.relu(self.a(x)), self.b(x), self.c(y), self.d(x), self.e(x) * 0.5,
                self.f(z), self.g(x.transpose(2, 3)))


def get_inputs():
    return [torch.randn(2, 6, 5, 45), torch.randn(2, 5, 101), torch.randn(2, 4, 3, 4, 37)]


def get_init_inputs():
    return []
