"""Loss: triplet margin loss (margin 0.8) over anchor, positive and negative rows."""

import torch
from torch import nn

FAMILY = "loss"


class Model(nn.Module):
    def __init__(self, margin: float) -> None:
        super().__init__()
        self.loss = nn.TripletMarginLoss(margin=margin)

    def forward(self, a: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        return self.loss(a, p, n)


def get_inputs():
    return [torch.randn(65, 511), torch.randn(65, 511), torch.randn(65, 511)]


def get_init_inputs():
    return [0.8]
