"""Lowering test task (family: softmax over a long odd last dim of a 5-D batch-1 input, and
log-softmax over a middle dim)."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x, y):
        return torch.softmax(x * 2.0, dim=-1), torch.log_softmax(y, dim=1)


def get_inputs():
    return [torch.randn(1, 2, 3, 2, 1037) * 4.0, torch.randn(2, 301, 9) * 4.0]


def get_init_inputs():
    return []
