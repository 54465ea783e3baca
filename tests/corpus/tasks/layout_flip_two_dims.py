"""Layout: flip dimensions 0 and 2 of a 3-D tensor."""

import torch
from torch import nn

FAMILY = "layout"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flip(x, dims=(0, 2))


def get_inputs():
    return [torch.randn(13, 17, 19)]


def get_init_inputs():
    return []
