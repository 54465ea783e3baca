"""Lowering test task (family: the C++ prelude's exp/tanh/erf over a wide range, inf and nan)."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return torch.stack([torch.exp(x), torch.tanh(x), torch.erf(x), torch.log(x.abs()),
                            torch.log(x), torch.log1p(x.abs()), torch.log1p(x),
                            torch.expm1(x), torch.nn.functional.elu(x)])


def get_inputs():
    wide = torch.linspace(-110.0, 95.0, 4001)
    small = torch.randn(2000) * 1e-3
    edge = torch.tensor([float("inf"), -float("inf"), float("nan"), 0.0, -0.0, 88.7, -87.3,
                         0.624, 0.626, 0.999, 1.001, -103.4, -103.6, 1e-40, 1e-38, 3e38,
                         -1.0, -0.999, 1e-9])
    return [torch.cat([wide, small, edge, torch.randn(1980) * 4])]


def get_init_inputs():
    return []
