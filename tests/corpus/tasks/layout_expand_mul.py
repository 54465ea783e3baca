"""Layout: unsqueeze + expand of a 2-D tensor multiplied into a 3-D one."""

import torch
from torch import nn

FAMILY = "layout"


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x.unsqueeze(1).expand(-1, y.shape[1], -1) * y


def get_inputs():
    return [torch.randn(33, 129), torch.randn(33, 5, 129)]


def get_init_inputs():
    return []
