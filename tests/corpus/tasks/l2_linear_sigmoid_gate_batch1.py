"""GEMM + epilogue: a batch-1 Linear (2047 -> 1023) gated by sigmoid and multiplied by its
own pre-activation (a mat-vec with an epilogue)."""

import torch
from torch import nn

FAMILY = "gemm_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        return y * torch.sigmoid(y + 0.5)


def get_inputs():
    return [torch.randn(1, 2047)]


def get_init_inputs():
    return [2047, 1023]


def get_shape_variants():
    return {"two_rows": [(2, 2047)], "nine_rows": [(9, 2047)]}
