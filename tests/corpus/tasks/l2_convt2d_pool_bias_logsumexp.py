"""Conv + epilogue: ConvTranspose2d, global average pool, bias, logsumexp over channels, sum,
times 10."""

import torch
from torch import nn

FAMILY = "conv_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.ConvTranspose2d(5, 12, 3, stride=2)
        self.bias = nn.Parameter(0.1 * torch.randn(12, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.mean(self.conv(x), dim=(2, 3), keepdim=True) + self.bias
        y = torch.logsumexp(y, dim=1, keepdim=True)
        return torch.sum(y, dim=(2, 3)) * 10.0


def get_inputs():
    return [torch.randn(4, 5, 15, 17)]


def get_init_inputs():
    return []
