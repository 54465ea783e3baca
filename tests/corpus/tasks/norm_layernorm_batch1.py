"""Norm: LayerNorm on a single row of 4099 features (batch 1)."""

import torch
from torch import nn

FAMILY = "norm"


class Model(nn.Module):
    def __init__(self, features: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(features)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(1, 4099)]


def get_init_inputs():
    return [4099]


def get_shape_variants():
    return {"three_rows": [(3, 4099)], "seventeen_rows": [(17, 4099)]}
