"""L2: 3x3 convolution, GroupNorm and ReLU (a ResNet-style block stem).

The contract allows vendor libraries: the convolution may run on oneDNN through torch, with
GroupNorm + ReLU lowered to one fused row-group kernel after it.
"""

import torch
from torch import nn

TOLERANCES = {"float32": (1e-3, 1e-4)}
ALLOWED_SPACES = ["custom_kernel", "vendor_library"]


class Model(nn.Module):
    def __init__(self, c_in: int, c_out: int, groups: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, kernel_size=3, padding=1)
        self.norm = nn.GroupNorm(groups, c_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(8, 16, 32, 32)]


def get_init_inputs():
    return [16, 32, 8]
