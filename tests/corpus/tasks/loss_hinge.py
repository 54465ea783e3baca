"""Loss: hinge loss mean(clamp(1 - pred * target, min=0)) with +-1 targets."""

import torch
from torch import nn

FAMILY = "loss"


class Model(nn.Module):
    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.clamp(1 - pred * target, min=0))


def get_inputs():
    return [torch.randn(1023, 17), torch.randint(0, 2, (1023, 1)).float() * 2 - 1]


def get_init_inputs():
    return []
