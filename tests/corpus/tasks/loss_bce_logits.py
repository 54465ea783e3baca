"""Loss: binary cross-entropy with logits against soft targets in [0, 1]."""

import torch
from torch import nn

FAMILY = "loss"


class Model(nn.Module):
    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return nn.functional.binary_cross_entropy_with_logits(logits, target.clamp(0.0, 1.0))


def get_inputs():
    return [torch.randn(255, 129) * 4.0, torch.rand(255, 129)]


def get_init_inputs():
    return []
