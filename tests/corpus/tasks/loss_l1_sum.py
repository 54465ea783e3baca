"""Loss: L1 loss with sum reduction on 3-D tensors."""

import torch
from torch import nn

FAMILY = "loss"


class Model(nn.Module):
    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return nn.functional.l1_loss(pred, target, reduction="sum")


def get_inputs():
    return [torch.randn(7, 33, 65), torch.randn(7, 33, 65)]


def get_init_inputs():
    return []
