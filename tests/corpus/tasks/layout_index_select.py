"""Layout: index_select rows of a table (an embedding lookup without autograd)."""

import torch
from torch import nn

FAMILY = "layout"


class Model(nn.Module):
    def forward(self, table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.index_select(table, 0, index)


def get_inputs():
    return [torch.randn(1001, 33), torch.randint(0, 1001, (257,))]


def get_init_inputs():
    return []


def get_shape_variants():
    return {"few": [(1001, 33), (31,)], "many": [(1001, 33), (1999,)]}
