"""Lowering test task (family: norms: layer norm over two trailing dims of a batch-1 4-D input,
group norm over odd channel groups, RMS norm, and a variance over a leading dim)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm((7, 33))
        self.gn = nn.GroupNorm(3, 6)
        self.rms = nn.RMSNorm(45)

    def forward(self, x, y, z):
        return self.ln(x), self.gn(y), self.rms(z), torch.var(z + 3.0, dim=0)


def get_inputs():
    return [torch.randn(1, 3, 7, 33) + 5.0, torch.randn(2, 6, 5, 7, 3), torch.randn(257, 3, 45)]


def get_init_inputs():
    return []
