"""Turn an exported FX graph (core ATen) into IR nodes, one lowering function per operator.

Lowering functions are registered by operator name in ``LOWERINGS`` (see ``ops_*.py``); each
receives the builder and the FX node and returns an IR node (or a tuple for multi-output
operators, read through ``getitem``). Shapes and dtypes come from the FX node's fake-tensor
metadata, so promotion and broadcasting follow torch exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import fx

from kernelwright.errors import LoweringError
from kernelwright.tools.lower.dtypes import compute_type, literal
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.ir import Input, Node, Pointwise
from kernelwright.tools.lower.ops import Ops

Lowering = Callable[["Builder", fx.Node], Any]
LOWERINGS: dict[str, Lowering] = {}


def register(*names: str) -> Callable[[Lowering], Lowering]:
    def wrap(fn: Lowering) -> Lowering:
        for name in names:
            LOWERINGS[name] = fn
        return fn

    return wrap


def op_name(target: Any) -> str:
    """``aten.add.Tensor`` -> ``add``; ``prims.var.default`` -> ``prims.var``."""
    packet = getattr(target, "overloadpacket", None)
    name = getattr(packet, "__name__", None) or getattr(target, "__name__", str(target))
    ns = getattr(target, "namespace", "aten")
    return name if ns == "aten" else f"{ns}.{name}"


def overload(target: Any) -> str:
    return getattr(target, "_overloadname", "default")


class Builder:
    """Walks the graph and keeps the FX node -> IR value map."""

    def __init__(self) -> None:
        self.values: dict[fx.Node, Any] = {}
        self.nodes: list[Node] = []
        self.current: fx.Node | None = None

    # -- arguments -----------------------------------------------------------------------

    def arg(self, value: Any) -> Any:
        """An FX argument as IR: nodes map to IR nodes, containers recursively."""
        if isinstance(value, fx.Node):
            return self.values[value]
        if isinstance(value, (list, tuple)):
            return type(value)(self.arg(v) for v in value)
        return value

    def args(self, n: fx.Node) -> tuple[list[Any], dict[str, Any]]:
        return [self.arg(a) for a in n.args], {k: self.arg(v) for k, v in n.kwargs.items()}

    @staticmethod
    def meta(n: fx.Node) -> Any:
        return n.meta.get("val")

    def out_spec(self, n: fx.Node) -> tuple[tuple[int, ...], torch.dtype]:
        val = self.meta(n)
        if not isinstance(val, torch.Tensor):
            raise LoweringError(f"{n.format_node()} does not produce one tensor")
        shape = tuple(int(s) for s in val.shape)
        return shape, val.dtype

    def add(self, node: Node) -> Node:
        if not node.name:
            node.name = f"n{len(self.nodes)}"
        self.nodes.append(node)
        return node

    # -- pointwise helpers ---------------------------------------------------------------

    def pointwise(self, shape: tuple[int, ...], dtype: torch.dtype, operands: list[Any],
                  fn: Callable[[Ops, list[str]], str], opd_dtype: torch.dtype | None = None,
                  cost: int = 1) -> Node:
        """A node computing ``fn(k, operand values)`` with operands broadcast to ``shape``
        and converted to ``opd_dtype`` (default: the output dtype)."""
        opd = opd_dtype or dtype
        ctype = compute_type(dtype)

        def body(k: Ops, idx: list[Ix]) -> str:
            vals = [broadcast_load(k, x, idx, opd) for x in operands]
            return k.let(fn(k, vals), ctype)

        deps = [x for x in operands if isinstance(x, Node)]
        return self.add(Pointwise(shape, dtype, deps, fn=body, cost=cost))

    def view_of(self, src: Node, shape: tuple[int, ...], dtype: torch.dtype | None,
                index_map: Callable[[Ops, list[Ix]], list[Ix]],
                guard: Callable[[Ops, list[Ix]], tuple[str, str] | None] | None = None
                ) -> Node:
        """A layout node: ``out[idx] = src[index_map(idx)]`` (no data movement)."""
        dtype = dtype or src.dtype

        def body(k: Ops, idx: list[Ix]) -> str:
            return src.load(k, index_map(k, idx))

        return self.add(Pointwise(shape, dtype, [src], fn=body, cost=0))


def broadcast_index(idx: list[Ix], src_shape: tuple[int, ...]) -> list[Ix]:
    """Right-aligned broadcasting: size-1 source dims read index 0."""
    off = len(idx) - len(src_shape)
    return [Ix.c(0) if s == 1 else idx[off + j] for j, s in enumerate(src_shape)]


def broadcast_load(k: Ops, x: Any, idx: list[Ix], dtype: torch.dtype) -> str:
    """Value of operand ``x`` (node or Python scalar) at ``idx``, as ``dtype``'s compute type."""
    if isinstance(x, Node):
        v = x.load(k, broadcast_index(idx, x.shape))
        want = compute_type(dtype)
        if dtype == torch.bool and x.dtype != torch.bool:
            return f"({v} != 0)"
        return v if compute_type(x.dtype) == want else f"(({want}){v})"
    if isinstance(x, (bool, int, float)):
        return literal(x, dtype)
    raise LoweringError(f"operand {x!r} of type {type(x).__name__} is not supported")


def make_input(shape, dtype, role: str, target: str, name: str) -> Input:
    return Input(tuple(int(s) for s in shape), dtype, [], name=name, role=role, target=target)
