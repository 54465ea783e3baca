"""LogSoftmax over dimension 0 (columns of a row-major matrix)."""

import torch
from torch import nn

FAMILY = "softmax"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=0)


def get_inputs():
    return [torch.randn(129, 515)]


def get_init_inputs():
    return []
