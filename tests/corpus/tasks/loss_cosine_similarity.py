"""Loss: 1 - mean cosine similarity of rows (two reductions per row, then a mean)."""

import torch
from torch import nn

FAMILY = "loss"


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.mean(1 - nn.functional.cosine_similarity(a, b, dim=1))


def get_inputs():
    return [torch.randn(129, 1537), torch.randn(129, 1537)]


def get_init_inputs():
    return []
