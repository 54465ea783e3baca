"""Lowering test task (family: reduce_multi)."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=(1, 3)), x.amax(dim=2), x.argmax(dim=1), x.var(dim=(0, 2))


def get_inputs():
    return [torch.randn(3, 9, 5, 11)]


def get_init_inputs():
    return []
