"""Lowering test task (family: bmm)."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.bmm(a, b.transpose(1, 2)).relu()


def get_inputs():
    return [torch.randn(3, 9, 13), torch.randn(3, 11, 13)]


def get_init_inputs():
    return []
