"""L2: attention scores: softmax(q @ k^T * scale) over the keys, for a batch of heads."""

import torch
from torch import nn

TOLERANCES = {"float32": (1e-4, 1e-3)}


class Model(nn.Module):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        return torch.softmax(scores, dim=-1)


def get_inputs():
    return [torch.randn(8, 256, 64), torch.randn(8, 256, 64)]


def get_init_inputs():
    return [0.125]


def get_shape_variants():
    # query and key counts that differ and are not multiples of a tile
    return {"ragged": [(3, 129, 64), (3, 77, 64)], "tiny": [(1, 5, 64), (1, 33, 64)]}
