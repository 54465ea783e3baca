"""Layout: one selected channel plus a narrowed window, broadcast against the input."""

import torch
from torch import nn

FAMILY = "layout"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        picked = x.select(1, 5).unsqueeze(1)
        window = x.narrow(1, 7, 9)
        return window - picked


def get_inputs():
    return [torch.randn(63, 19, 127)]


def get_init_inputs():
    return []
