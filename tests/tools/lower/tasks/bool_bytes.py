"""Lowering test task (family: bool inputs and outputs, stored as bytes)."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, mask, x, y):
        return (x > y, torch.where(mask, x, 0.5 * y), ~mask, mask & (x > 0),
                (mask.float() + (y < 0).float()) * x, mask.sum(dim=1))


def get_inputs():
    return [torch.rand(37, 515) < 0.3, torch.randn(37, 515), torch.randn(37, 515)]


def get_init_inputs():
    return []
