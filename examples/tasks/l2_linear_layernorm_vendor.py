"""L2: a dense layer followed by LayerNorm over the features (a transformer sub-block).

The contract allows vendor libraries: the GEMM may run on the host BLAS, the LayerNorm as one
fused row-group kernel after it.
"""

import torch
from torch import nn

TOLERANCES = {"float32": (1e-3, 1e-4)}
ALLOWED_SPACES = ["custom_kernel", "vendor_library"]


class Model(nn.Module):
    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)
        self.norm = nn.LayerNorm(d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.fc(x))


def get_inputs():
    return [torch.randn(4, 96, 512)]


def get_init_inputs():
    return [512, 512]
