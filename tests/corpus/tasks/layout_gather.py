"""Layout: gather along dim 1 with an int64 index tensor."""

import torch
from torch import nn

FAMILY = "layout"


class Model(nn.Module):
    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.gather(x, 1, index)


def get_inputs():
    return [torch.randn(129, 513), torch.randint(0, 513, (129, 77))]


def get_init_inputs():
    return []
