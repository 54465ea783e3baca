"""Scan: cumulative mean (cumsum divided by the running count) with a pointwise prologue."""

import torch
from torch import nn

FAMILY = "scan"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        count = torch.arange(1, x.shape[-1] + 1, dtype=x.dtype)
        return torch.cumsum(torch.relu(x), dim=-1) / count


def get_inputs():
    return [torch.randn(4, 65, 513)]


def get_init_inputs():
    return []
