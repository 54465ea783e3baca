"""Layout: swap dims 1 and 3 of a 4-D tensor and scale (a transpose with an epilogue)."""

import torch
from torch import nn

FAMILY = "layout"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(1, 3) * 0.5


def get_inputs():
    return [torch.randn(3, 17, 29, 31)]


def get_init_inputs():
    return []
