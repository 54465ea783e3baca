"""Lowering test task (family: losses)."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x, t, y):
        return (
            nn.functional.cross_entropy(x, t),
            nn.functional.mse_loss(x, y),
            nn.functional.smooth_l1_loss(x, y),
            nn.functional.kl_div(x.log_softmax(-1), y.softmax(-1), reduction="batchmean"),
        )


def get_inputs():
    return [torch.randn(8, 10), torch.randint(0, 10, (8,)), torch.randn(8, 10)]


def get_init_inputs():
    return []
