"""LogSoftmax over the last dimension."""

import torch
from torch import nn

FAMILY = "softmax"


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.op = nn.LogSoftmax(dim=-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.op(x)


def get_inputs():
    return [torch.randn(511, 1001) * 5.0]


def get_init_inputs():
    return []
