"""Layout: stack three derived tensors along a new dimension 1."""

import torch
from torch import nn

FAMILY = "layout"


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.stack([a, b, a * b], dim=1)


def get_inputs():
    return [torch.randn(65, 257), torch.randn(65, 257)]


def get_init_inputs():
    return []
