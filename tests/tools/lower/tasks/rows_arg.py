"""Lowering test task (family: arg-reductions with ties, NaN and -inf, over the last dim, a
middle dim and several dims)."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x, y):
        x = torch.floor(x * 2.0)  # many ties
        return (torch.argmax(x, dim=-1), torch.argmin(x, dim=1), torch.argmax(y, dim=-1),
                torch.max(x, dim=2)[1], torch.argmin(y, dim=-1))


def get_inputs():
    y = torch.randn(5, 37)
    y[1, 20] = float("nan")
    y[1, 30] = float("nan")
    y[2, :] = float("-inf")
    y[3, 33] = float("inf")
    y[4, 3] = float("inf")
    y[4, 35] = float("inf")
    return [torch.randn(2, 19, 41), y]


def get_init_inputs():
    return []
