"""Lowering test task (family: clamps against literal bounds: relu, clamp, hardtanh, relu6,
hardsigmoid, hardswish; and fmax/fmin; on nan, signed zeros, infinities and ordinary values)."""

import torch
from torch import nn
from torch.nn import functional as F


class Model(nn.Module):
    def forward(self, x, y):
        return torch.stack([torch.relu(x), torch.clamp(x, -0.5, 0.5), torch.clamp_min(x, 0.25),
                            torch.clamp_max(x, -0.25), F.hardtanh(x), F.relu6(x),
                            F.hardsigmoid(x), F.hardswish(x), torch.clamp(x, 0, float("nan")),
                            torch.fmax(x, y), torch.fmin(x, y)])


def get_inputs():
    edge = torch.tensor([float("nan"), -0.0, 0.0, float("inf"), -float("inf"), -3.0, 3.0, 6.0,
                         -6.0, 0.5, -0.5, 0.25, -0.25, 1.0, -1.0])
    x = torch.cat([edge, torch.randn(1009) * 5])
    # y: nan where x is not, where x is too, and signed zeros against x's
    y = torch.cat([torch.tensor([float("nan"), 0.0, -0.0, float("nan"), 1.0, -3.0, float("nan"),
                                 6.0, -6.0, 0.5, -0.5, 0.25, -0.25, 1.0, -1.0]),
                   torch.randn(1009) * 5])
    return [x, y]


def get_init_inputs():
    return []
