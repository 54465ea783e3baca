"""Which input dimensions of a reference are free, and which are tied to each other.

``torch.export`` with every input dimension dynamic (``Dim.AUTO``) says it: dimensions the
model ties (the K of ``A.T @ B.T``, the feature size a Linear's weight fixes, a broadcast
partner) share a symbol or are specialised to their nominal size; the rest are free. Scaling
each free symbol, and evaluating derived sizes (``2*s0`` of a cat) from them, gives shape
variants the reference accepts by construction. Size-1 dimensions are specialised by export
(its 0/1 rule), so when nothing else is free a batch of 1 is grown instead (probed by running
the reference, as for every variant).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from typing import Any

import torch

log = logging.getLogger(__name__)

Shapes = list[tuple[int, ...] | None]


def symbolic_shapes(model: torch.nn.Module, nominal: list[Any]) -> tuple[list, dict] | None:
    """Per input, per dim: an int (fixed) or a sympy expression of free symbols; and each
    symbol's lower bound. None when the reference does not export with dynamic dims."""
    from torch.export import Dim

    dyn = tuple({d: Dim.AUTO for d in range(t.dim())} if isinstance(t, torch.Tensor) else None
                for t in nominal)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            logging.getLogger("torch._export").setLevel(logging.ERROR)
            ep = torch.export.export(model, tuple(nominal), dynamic_shapes=dyn, strict=False)
    except Exception as exc:  # noqa: BLE001 - any failure falls back to probing
        log.debug("dynamic export failed: %s", exc)
        return None
    by_name = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    shapes: list = []
    user = list(ep.graph_signature.user_inputs)
    tensors = [t for t in nominal if isinstance(t, torch.Tensor)]
    if len(user) != len(nominal) and len(user) != len(tensors):
        return None
    names = iter(user)
    for t in nominal:
        if not isinstance(t, torch.Tensor):
            if len(user) == len(nominal):
                next(names)
            shapes.append(None)
            continue
        val = by_name[next(names)].meta.get("val")
        if val is None:
            return None
        shapes.append([d.node.expr if isinstance(d, torch.SymInt) else int(d)
                       for d in val.shape])
    lower = {}
    for sym, rng in ep.range_constraints.items():
        try:
            lower[sym] = int(rng.lower)
        except (TypeError, ValueError, OverflowError):
            lower[sym] = 1
    return shapes, lower


def scaled_shapes(nominal: list[Any], symbolic: tuple[list, dict],
                  scale: Callable[[int], int]) -> Shapes | None:
    """Every free symbol scaled (at least its lower bound), derived sizes evaluated."""
    shapes, lower = symbolic
    values: dict[Any, int] = {}
    for t, dims in zip(nominal, shapes, strict=True):
        if dims is None:
            continue
        for size, expr in zip(t.shape, dims, strict=True):
            if not isinstance(expr, int) and expr.is_Symbol:
                values[expr] = int(size)
    if not values:
        return None
    new = {s: max(scale(v), lower.get(s, 1)) for s, v in values.items()}
    out: Shapes = []
    for dims in shapes:
        if dims is None:
            out.append(None)
            continue
        sized = []
        for expr in dims:
            if isinstance(expr, int):
                sized.append(expr)
                continue
            got = expr.subs(new)
            if not got.is_number:
                return None
            sized.append(int(got))
        out.append(tuple(sized))
    return out


def grown_batch(nominal: list[Any], size: int) -> Shapes:
    """Dim 0 of every tensor input whose dim 0 is 1 grown to ``size``."""
    return [None if not isinstance(t, torch.Tensor) else
            ((size, *t.shape[1:]) if t.dim() > 0 and t.shape[0] == 1 else tuple(t.shape))
            for t in nominal]
