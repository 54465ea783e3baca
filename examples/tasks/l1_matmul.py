"""L1: single-precision matrix product C = A @ B of two square matrices."""

import torch
from torch import nn

# K up to 256: accumulation order changes the result by a few ulps of the partial sums
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


def get_inputs():
    return [torch.randn(256, 256), torch.randn(256, 256)]


def get_init_inputs():
    return []


def get_shape_variants():
    # sizes that are not multiples of any tile, and a thin product
    return {"ragged": [(129, 200), (200, 77)], "thin": [(7, 256), (256, 33)]}
