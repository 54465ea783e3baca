"""Conv + epilogue: Conv1d, GELU, then LayerNorm over channels (via transposes)."""

import torch
from torch import nn

FAMILY = "conv_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv1d(9, 24, 3, padding=1)
        self.norm = nn.LayerNorm(24)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = nn.functional.gelu(self.conv(x))
        return self.norm(y.transpose(1, 2)).transpose(1, 2)


def get_inputs():
    return [torch.randn(5, 9, 203)]


def get_init_inputs():
    return []
