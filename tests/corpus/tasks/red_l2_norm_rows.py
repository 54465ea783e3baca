"""Reduction: Euclidean norm of every row."""

import torch
from torch import nn

FAMILY = "reduction"


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.linalg.vector_norm(x, ord=2, dim=-1)


def get_inputs():
    return [torch.randn(999, 513)]


def get_init_inputs():
    return []
