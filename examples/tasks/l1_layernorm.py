"""L1: layer normalisation over the feature dimension, with a learned scale and shift."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, features: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.features = features
        self.eps = eps
        # not the identity init of nn.LayerNorm, so that the affine part is actually tested
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(features))
        self.bias = nn.Parameter(0.1 * torch.randn(features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.layer_norm(x, (self.features,), self.weight, self.bias, self.eps)


def get_inputs():
    return [torch.randn(4096, 768) * 2.0 + 0.5]


def get_init_inputs():
    return [768]
