"""Loss: Huber loss with delta 0.7 (quadratic near zero, linear beyond)."""

import torch
from torch import nn

FAMILY = "loss"


class Model(nn.Module):
    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return nn.functional.huber_loss(pred, target, delta=0.7)


def get_inputs():
    return [torch.randn(63, 1001), torch.randn(63, 1001)]


def get_init_inputs():
    return []
