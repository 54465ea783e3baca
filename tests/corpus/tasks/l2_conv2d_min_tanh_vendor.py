"""Conv + epilogue: Conv2d, min over channels, tanh twice; a vendor convolution is allowed."""

import torch
from torch import nn

FAMILY = "conv_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}
ALLOWED_SPACES = ["custom_kernel", "vendor_library"]


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(8, 24, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.min(self.conv(x), dim=1, keepdim=True)[0]
        return torch.tanh(torch.tanh(y))


def get_inputs():
    return [torch.randn(3, 8, 35, 37)]


def get_init_inputs():
    return []
