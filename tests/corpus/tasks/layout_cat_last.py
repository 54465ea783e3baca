"""Layout: concatenate along the last dimension (127 + 3 columns)."""

import torch
from torch import nn

FAMILY = "layout"


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.cat((a, torch.relu(b)), dim=-1)


def get_inputs():
    return [torch.randn(255, 127), torch.randn(255, 3)]


def get_init_inputs():
    return []
