"""Layout: permute (2, 0, 1) of a 3-D tensor, materialised."""

import torch
from torch import nn

FAMILY = "layout"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.permute(2, 0, 1).contiguous()


def get_inputs():
    return [torch.randn(63, 129, 31)]


def get_init_inputs():
    return []
