"""Conv + epilogue: Conv2d (16 -> 32, 3x3, padding 1), extra bias, ReLU; a vendor
convolution is allowed."""

import torch
from torch import nn

FAMILY = "conv_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}
ALLOWED_SPACES = ["custom_kernel", "vendor_library"]


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(16, 32, 3, padding=1)
        self.bias = nn.Parameter(0.1 * torch.randn(32, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x) + self.bias)


def get_inputs():
    return [torch.randn(2, 16, 29, 31)]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"one_small": [(1, 16, 7, 9)], "three": [(3, 16, 17, 14)]}
