"""Lowering test task (family: softmax_mid)."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return torch.log_softmax(x, dim=1)


def get_inputs():
    return [torch.randn(3, 17, 5, 4)]


def get_init_inputs():
    return []
