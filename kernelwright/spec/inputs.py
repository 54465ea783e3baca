"""Making inputs for a task: the nominal ones from ``get_inputs``, other shapes by derivation.

Shared by contract derivation (in the agent process) and verification (in the worker), so both
see exactly the same tensors for a given (variant, seed).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import torch

from kernelwright.errors import TaskError

NOMINAL = "nominal"


def init_inputs_for(module: ModuleType) -> list[Any]:
    """Constructor arguments of ``Model`` (``[]`` when the task defines no get_init_inputs)."""
    fn = getattr(module, "get_init_inputs", None)
    return list(fn()) if fn is not None else []


def nominal_inputs(module: ModuleType, seed: int) -> list[Any]:
    """``get_inputs()`` drawn under ``seed``: fresh tensors for every call."""
    torch.manual_seed(seed)
    return list(module.get_inputs())


def inputs_like(
    template: Sequence[Any], shapes: Sequence[Sequence[int] | None], seed: int
) -> list:
    """Tensors with new ``shapes`` drawn from the same kind of values as ``template``.

    Floating inputs keep the nominal mean and spread, integer inputs their range, booleans their
    kind; a non-tensor input (or a ``None`` shape) is passed through unchanged.
    """
    gen = torch.Generator().manual_seed(seed)
    out: list[Any] = []
    for value, shape in zip(template, shapes, strict=True):
        if not isinstance(value, torch.Tensor) or shape is None:
            out.append(value)
        else:
            out.append(_draw_like(value, tuple(shape), gen))
    return out


def _draw_like(t: torch.Tensor, shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    if t.dtype == torch.bool:
        return torch.rand(shape, generator=gen) < 0.5
    if t.is_floating_point():
        ref = t.double()
        mean = float(ref.mean()) if t.numel() else 0.0
        std = float(ref.std()) if t.numel() > 1 else 1.0
        std = std if std > 0 else 1.0
        return (torch.randn(shape, generator=gen, dtype=torch.float64) * std + mean).to(t.dtype)
    lo = int(t.min()) if t.numel() else 0
    hi = int(t.max()) if t.numel() else 1
    return torch.randint(lo, hi + 1, shape, generator=gen, dtype=t.dtype)


def variant_maker(module: ModuleType, name: str, spec: Any) -> Callable[[int], list[Any]]:
    """A function ``seed -> inputs`` for one entry of a task's ``get_shape_variants()``.

    An entry is either a list of input shapes (tensors drawn like the nominal ones) or a
    zero-argument function returning the inputs (called under the seed).
    """
    if callable(spec):

        def call(seed: int) -> list[Any]:
            torch.manual_seed(seed)
            return list(spec())

        return call
    shapes = [None if s is None else tuple(s) for s in spec]

    def draw(seed: int) -> list[Any]:
        return inputs_like(nominal_inputs(module, seed), shapes, seed)

    return draw


def as_tensor_list(outputs: Any, where: str) -> list[torch.Tensor]:
    """Normalise a forward's return value to a list of tensors; raise ``TaskError`` otherwise."""
    items = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    bad = [type(o).__name__ for o in items if not isinstance(o, torch.Tensor)]
    if bad or not items:
        raise TaskError(
            f"{where}: forward returned {', '.join(bad) or 'nothing'}, not tensors. Return a "
            "tensor or a tuple of tensors from Model.forward."
        )
    return items
