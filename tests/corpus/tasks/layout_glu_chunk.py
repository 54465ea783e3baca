"""Layout: GLU via chunk, first half times sigmoid of the second half."""

import torch
from torch import nn

FAMILY = "layout"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = x.chunk(2, dim=-1)
        return a * torch.sigmoid(b)


def get_inputs():
    return [torch.randn(127, 1022)]


def get_init_inputs():
    return []
