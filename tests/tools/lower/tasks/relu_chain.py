"""Lowering test task (family: relu_chain)."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x, y):
        return torch.relu(x * 2 + y).sigmoid() - torch.tanh(x)


def get_inputs():
    return [torch.randn(7, 33), torch.randn(33)]


def get_init_inputs():
    return []
