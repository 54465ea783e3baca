"""Lowering test task (family: layout)."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x, i):
        a = torch.cat([x, x.flip(0) * 2], dim=1)
        b = torch.gather(x, 1, i)
        return a.permute(1, 0)[2:9:2], b, x[:, 1], torch.nn.functional.pad(x, (1, 2))


def get_inputs():
    return [torch.randn(5, 8), torch.randint(0, 8, (5, 3))]


def get_init_inputs():
    return []
