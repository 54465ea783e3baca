"""Layout: concatenate three tensors along dim 1 (33, 7 and 1 channels), one of them scaled."""

import torch
from torch import nn

FAMILY = "layout"


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return torch.cat([a, b * 2.0, c], dim=1)


def get_inputs():
    return [torch.randn(17, 33, 65), torch.randn(17, 7, 65), torch.randn(17, 1, 65)]


def get_init_inputs():
    return []
