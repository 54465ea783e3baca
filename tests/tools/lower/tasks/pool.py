"""Lowering test task (family: pool)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.mp = nn.MaxPool2d(3, 2, 1)
        self.ap = nn.AvgPool3d(2, 2, 1)

    def forward(self, x, y):
        return self.mp(x), self.ap(y), nn.functional.adaptive_avg_pool2d(x, (3, 2))


def get_inputs():
    return [torch.randn(3, 3, 11, 9), torch.randn(3, 2, 5, 6, 7)]


def get_init_inputs():
    return []
