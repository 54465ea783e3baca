"""Loss: cross-entropy of logits over 101 classes against int64 class targets."""

import torch
from torch import nn

FAMILY = "loss"


class Model(nn.Module):
    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return nn.functional.cross_entropy(logits, target)


def get_inputs():
    return [torch.randn(257, 101) * 3.0, torch.randint(0, 101, (257,))]


def get_init_inputs():
    return []
