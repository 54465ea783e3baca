"""Lowering test task (family: conv, grouped 2-D with stride, padding, dilation and a bias +
ReLU epilogue)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(6, 10, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2),
                              groups=2)

    def forward(self, x):
        return torch.relu(self.conv(x)) + 1.0


def get_inputs():
    return [torch.randn(3, 6, 11, 9)]


def get_init_inputs():
    return []
