"""Lowering test task (family: convt): transposed convolutions of every form the implicit GEMM
gathers: 1-D stride 3 with dilation, 2-D stride 1 (no zeros in B), 2-D asymmetric stride with
output padding and groups, odd sizes, batch 1."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.ConvTranspose1d(5, 7, 4, stride=3, padding=2, dilation=2)
        self.b = nn.ConvTranspose2d(9, 5, 3, stride=1, padding=1, bias=False)
        self.c = nn.ConvTranspose2d(6, 4, (3, 2), stride=(2, 3), padding=(1, 0),
                                    output_padding=(1, 2), groups=2)

    def forward(self, x, y, z):
        return torch.relu(self.a(x)), self.b(y), self.c(z) * 0.5


def get_inputs():
    return [torch.randn(1, 5, 11), torch.randn(1, 9, 7, 5), torch.randn(1, 6, 5, 3)]


def get_init_inputs():
    return []
