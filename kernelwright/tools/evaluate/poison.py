"""A dispatch mode active during the candidate's forward: poisons fresh allocations and
records which aten operators the candidate used.

Poisoning makes uninitialised reads visible: every ``empty``-family allocation is filled with
NaN on one pass and a large finite value on another, so a kernel that leaves part of its
output unwritten (or relies on a freed buffer still holding an old result) gives different,
wrong answers. The recorded operators implement the "framework" implementation-space check.
"""

from __future__ import annotations

from typing import Any, Literal

import torch
from torch.utils._python_dispatch import TorchDispatchMode

PoisonKind = Literal["nan", "big"]

EMPTY_OPS = frozenset(
    {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "empty_permuted"}
)

# Operators that allocate, fill, copy, convert or re-view memory: allowed to a candidate whose
# contract forbids framework operators. Anything else computes and is flagged.
NON_COMPUTE_OPS = EMPTY_OPS | frozenset(
    {
        "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "new_zeros",
        "new_ones", "new_full", "zero_", "fill_", "fill", "arange", "scalar_tensor",
        "copy_", "copy", "clone", "_to_copy", "to", "contiguous", "detach", "detach_", "alias",
        "lift_fresh", "lift_fresh_copy", "resize_", "set_", "_local_scalar_dense", "item",
        "view", "_unsafe_view", "reshape", "_reshape_alias", "view_as", "as_strided",
        "as_strided_", "t", "transpose", "permute", "expand", "expand_as", "squeeze",
        "unsqueeze", "select", "slice", "narrow", "flatten", "unflatten", "split",
        "split_with_sizes", "chunk", "unbind", "movedim", "cat", "stack", "unfold",
        "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "is_same_size",
        "resolve_conj", "resolve_neg", "_has_compatible_shallow_copy_type",
    }
)


def poison_value(dtype: torch.dtype, kind: PoisonKind) -> Any:
    """The fill value for ``dtype``: NaN / a large finite float, or extreme integers."""
    if dtype == torch.bool:
        return kind == "nan"
    if dtype.is_floating_point or dtype.is_complex:
        if kind == "nan":
            return float("nan")
        finfo = torch.finfo(dtype)
        return min(1e30, finfo.max / 8)
    iinfo = torch.iinfo(dtype)
    return iinfo.min if kind == "nan" else iinfo.max // 3


class PoisonMode(TorchDispatchMode):
    """Fill every uninitialised allocation with a poison value and record operator names.

    Example:
        >>> with PoisonMode("nan") as mode:
        ...     t = torch.empty(3)
        >>> bool(t.isnan().all()), "empty" in mode.ops
        (True, True)
    """

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # Otherwise torch wraps __torch_dispatch__ in dynamo.disable, whose first call imports
        # torch._dynamo (~2-4 s per worker). The harness never compiles inside this mode.
        return False

    def __init__(self, kind: PoisonKind = "nan") -> None:
        super().__init__()
        self.kind = kind
        self.ops: set[str] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: D105
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        self.ops.add(name)
        if name in EMPTY_OPS and isinstance(out, torch.Tensor) and out.numel():
            out.fill_(poison_value(out.dtype, self.kind))
        return out

    @property
    def compute_ops(self) -> set[str]:
        """Recorded operators that do arithmetic (not allocation, copies or views)."""
        return {op for op in self.ops if op not in NON_COMPUTE_OPS}

    def __repr__(self) -> str:
        return f"PoisonMode({self.kind!r})"
