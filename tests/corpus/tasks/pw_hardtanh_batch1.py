"""Pointwise: HardTanh with asymmetric bounds on a single long row (batch 1)."""

import torch
from torch import nn

FAMILY = "pointwise"


class Model(nn.Module):
    def __init__(self, lo: float, hi: float) -> None:
        super().__init__()
        self.lo = lo
        self.hi = hi

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.hardtanh(x, min_val=self.lo, max_val=self.hi)


def get_inputs():
    return [torch.randn(1, 131071)]


def get_init_inputs():
    return [-0.6, 1.3]


def get_shape_variants():
    return {"short_row": [(1, 4099)], "three_rows": [(3, 20001)]}
