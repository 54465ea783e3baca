"""LogSumExp over the two trailing dimensions of a 3-D tensor, keepdim."""

import torch
from torch import nn

FAMILY = "softmax"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.logsumexp(x, dim=(1, 2), keepdim=True)


def get_inputs():
    return [torch.randn(9, 31, 77) * 4.0]


def get_init_inputs():
    return []
