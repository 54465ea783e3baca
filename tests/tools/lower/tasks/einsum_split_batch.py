"""Lowering test task (family: gemm, an einsum whose batch merges dims that the operands
store apart: ``b c h`` of a weight laid out (b, c, l, h, n) and of an input reshaped to
blocks). The batch index reaches each operand through divisions and remainders only; a
probe that read such an operand as shared folded the whole batch onto its first copy
(KernelBench level 3's Mamba2)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.B = nn.Parameter(torch.randn(3, 2, 19, 5, 7))

    def forward(self, x):
        blocks = x.reshape(3, 2, 19, 5, 11)
        return torch.einsum("bclhn,bclhp->bchpn", self.B, blocks)


def get_inputs():
    return [torch.randn(3, 38, 5, 11)]


def get_init_inputs():
    return []
