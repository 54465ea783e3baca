"""Lowering test task (family: groupnorm)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gn = nn.GroupNorm(3, 6)
        self.inn = nn.InstanceNorm2d(6)

    def forward(self, x):
        return self.inn(self.gn(x))


def get_inputs():
    return [torch.randn(3, 6, 5, 7)]


def get_init_inputs():
    return []
