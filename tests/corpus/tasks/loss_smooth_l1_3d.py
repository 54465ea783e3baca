"""Loss: smooth L1 with beta 0.5 on 3-D tensors."""

import torch
from torch import nn

FAMILY = "loss"


class Model(nn.Module):
    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return nn.functional.smooth_l1_loss(pred, target, beta=0.5)


def get_inputs():
    return [torch.randn(4, 255, 33), torch.randn(4, 255, 33)]


def get_init_inputs():
    return []
