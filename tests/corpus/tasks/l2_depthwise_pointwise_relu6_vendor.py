"""Conv + epilogue: a MobileNet block, depthwise 3x3 conv, ReLU6, 1x1 conv, ReLU6; vendor
convolutions allowed."""

import torch
from torch import nn

FAMILY = "conv_epilogue"
TOLERANCES = {"float32": (1e-3, 1e-4)}
ALLOWED_SPACES = ["custom_kernel", "vendor_library"]


class Model(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.dw = nn.Conv2d(cin, cin, 3, padding=1, groups=cin)
        self.pw = nn.Conv2d(cin, cout, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = nn.functional.relu6(self.dw(x))
        return nn.functional.relu6(self.pw(y))


def get_inputs():
    return [torch.randn(2, 24, 25, 27)]


def get_init_inputs():
    return [24, 40]


def get_shape_variants():
    return {"one_small": [(1, 24, 7, 5)], "three": [(3, 24, 13, 16)]}
