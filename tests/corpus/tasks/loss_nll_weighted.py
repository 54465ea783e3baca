"""Loss: weighted negative log-likelihood over log-probabilities (per-class weights)."""

import torch
from torch import nn

FAMILY = "loss"


class Model(nn.Module):
    def __init__(self, classes: int) -> None:
        super().__init__()
        self.register_buffer("weight", 0.5 + torch.rand(classes))

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        logp = torch.log_softmax(logits, dim=1)
        return nn.functional.nll_loss(logp, target, weight=self.weight)


def get_inputs():
    return [torch.randn(191, 37), torch.randint(0, 37, (191,))]


def get_init_inputs():
    return [37]
