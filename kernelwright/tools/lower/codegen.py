"""Kernel bodies under construction: statements, value numbering (CSE) and fusion binding.

A :class:`KernelCtx` is the code-writing handler of the ops interface (``ops.Ops``) that
every IR node's ``load`` computes through; nodes append statements and return the C name of
the value. Loads of realized nodes read buffers; loads of nodes the
current kernel computes itself (a reduction's scalar, an anchor's accumulator) return the
register, but only at the kernel's own index: anything else raises :class:`NotFusable`.
The scheduler checks this before emission (``fusion.fusable``); the exception is the
fallback should a case slip past that check.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kernelwright.tools.lower.index import Ix, linear, same_index

if TYPE_CHECKING:
    from kernelwright.tools.lower.dialect import Dialect
    from kernelwright.tools.lower.ir import Node


class Realized(dict):
    """node id -> buffer name for the nodes other kernels compute, plus ``layouts``: the
    buffers whose memory is not row-major, each as its dims in memory order (a channels-last
    NCHW buffer written by a library convolution: ``(0, 2, 3, 1)``)."""

    def __init__(self, names: dict[int, str] | None = None,
                 layouts: dict[str, tuple[int, ...]] | None = None) -> None:
        super().__init__(names or {})
        self.layouts: dict[str, tuple[int, ...]] = dict(layouts or {})


class NotFusable(Exception):
    """A group member read a group-computed value at another index: split the group."""

    def __init__(self, node: Node) -> None:
        super().__init__(node.name)
        self.node = node


@dataclass
class Binding:
    """A value the kernel holds in a register for the output index ``key``."""

    key: list[Ix]
    var: str


@dataclass
class KernelCtx:
    """The body of one kernel being emitted."""

    dialect: Dialect
    realized: dict[int, str]  # node id -> buffer name, for nodes computed by other kernels
    lines: list[str] = field(default_factory=list)
    depth: int = 1
    scopes: list[dict[str, str]] = field(default_factory=lambda: [{}])
    declared: list[set[str]] = field(default_factory=list)  # names declared per open block
    bound: dict[int, list[Binding]] = field(default_factory=dict)
    buffers: dict[str, tuple] = field(default_factory=dict)  # name -> (node, mode)
    counter: int = 0
    idx_type: str = "int"
    owned: set[int] = field(default_factory=set)  # non-pointwise nodes this kernel computes
    subgroup: bool = False  # cooperative rows reduce over one sub-group (SYCL)
    lanes: int = 0  # rows one work-item each: partial results per lane (emit._reduce_lanes)
    stash: tuple | None = None  # emit.rows.stash_of: elements kept in an output on the way
    simd: bool = False  # mark row loops OpenMP ``simd`` (the C++ backend)
    # C++ column blocks (backends.cpp_columns): ``column`` neighbouring rows are the lanes of
    # ``cv`` loops; outside such a loop a row's value is an array of one element per lane
    column: int = 0
    in_lanes: bool = False
    target: Any = None  # the backends.Codegen emitting this kernel (group reductions)
    layouts: dict[str, tuple[int, ...]] = field(default_factory=dict)  # see Realized

    # -- statements ----------------------------------------------------------------------

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def fresh(self, prefix: str = "t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def let(self, expr: str, ctype: str) -> str:
        """Name ``expr`` (value numbered: the same text in scope returns the same name)."""
        key = f"{ctype}|{expr}"
        for scope in reversed(self.scopes):
            if key in scope:
                return scope[key]
        name = self._declare(self.fresh(), ctype, expr, const=True)
        self.scopes[-1][key] = name
        return name

    def var(self, ctype: str, init: str, prefix: str = "a") -> str:
        """A mutable variable (accumulators): never value numbered."""
        return self._declare(self.fresh(prefix), ctype, init, const=False)

    def _declare(self, name: str, ctype: str, value: str, const: bool) -> str:
        if self.column and not self.in_lanes:  # a value per row of the column block
            self.emit(f"{ctype} {name}[{self.column}];")
            self.emit("#pragma omp simd")
            self.emit(f"for (int cv = 0; cv < cw; ++cv) {name}[cv] = {value};")
            return f"{name}[cv]"
        self.emit(f"{'const ' if const else ''}{ctype} {name} = {value};")
        if self.declared:
            self.declared[-1].add(name)
        return name

    @contextmanager
    def block(self, header: str) -> Iterator[None]:
        self.emit(header + " {")
        self.depth += 1
        self.scopes.append({})
        self.declared.append(set())
        try:
            yield
        finally:
            self.scopes.pop()
            self._unbind(self.declared.pop())
            self.depth -= 1
            self.emit("}")

    def _unbind(self, names: set[str]) -> None:
        """Forget the bindings to registers declared in a block that just closed (another
        block that reads the same element, e.g. a GEMM tile's clamped rows, computes it
        again instead of naming a variable out of scope)."""
        if not names:
            return
        for node_id, found in self.bound.items():
            self.bound[node_id] = [b for b in found
                                   if names.isdisjoint(re.findall(r"[A-Za-z_]\w*", b.var))]

    def in_simd_loop(self) -> bool:
        """Whether the statement emitted next lies inside a loop marked ``#pragma omp simd``
        (read off the open blocks: each opened one indent level above the current)."""
        level = self.depth
        for i in range(len(self.lines) - 1, 0, -1):
            text = self.lines[i].lstrip(" ")
            indent = (len(self.lines[i]) - len(text)) // 4
            if text and indent < level:
                level = indent
                if (text.startswith("for ")
                        and self.lines[i - 1].lstrip().startswith("#pragma omp simd")):
                    return True
        return False

    @contextmanager
    def loop(self, name: str, size: int) -> Iterator[Ix]:
        with self.block(f"for ({self.idx_type} {name} = 0; {name} < {size}; ++{name})"):
            yield Ix.var(name, size)

    # -- math (the dialect's spellings) ---------------------------------------------------

    def call(self, name: str, ctype: str, *args: str) -> str:
        return self.dialect.call(name, ctype, *args)

    def max_nan(self, a: str, b: str) -> str:
        return self.dialect.max_nan(a, b)

    def min_nan(self, a: str, b: str) -> str:
        return self.dialect.min_nan(a, b)

    # -- buffers -------------------------------------------------------------------------

    def use(self, name: str, node: Node, mode: str = "r") -> str:
        old = self.buffers.get(name)
        if old is None or (old[1] == "r" and mode == "w"):
            self.buffers[name] = (node, mode)
        return name

    def load_buffer(self, name: str, node: Node, idx: list[Ix]) -> str:
        from kernelwright.tools.lower.dtypes import compute_type, load_expr

        self.use(name, node)
        flat = self.flat(name, node, idx)
        return self.let(load_expr(node.dtype, f"{name}[{flat.render()}]"),
                        compute_type(node.dtype))

    def flat(self, name: str, node: Node, idx: list[Ix]) -> Ix:
        """The element offset of ``node[idx]`` in the buffer ``name`` (its layout, if any)."""
        order = self.layouts.get(name)
        if order is None:
            return linear(idx, node.shape)
        return linear([idx[d] for d in order], tuple(node.shape[d] for d in order))

    def store(self, name: str, node: Node, idx: list[Ix], value: str) -> None:
        from kernelwright.tools.lower.dtypes import store_expr

        self.use(name, node, "w")
        flat = self.flat(name, node, idx)
        self.emit(f"{name}[{flat.render()}] = {store_expr(node.dtype, value)};")

    # -- fusion bindings -----------------------------------------------------------------

    def bind(self, node: Node, key: list[Ix], var: str) -> None:
        self.bound.setdefault(node.id, []).append(Binding(key, var))

    def lookup(self, node: Node, key: list[Ix]) -> str | None:
        """The register bound for ``node`` at ``key``; None means compute it here.

        A non-pointwise node this kernel computes (owned) that is read before it is bound,
        or at another index, cannot be recomputed cheaply: raise ``NotFusable``.
        """
        for b in self.bound.get(node.id, []):
            if same_index(b.key, key):
                return b.var
        if node.id in self.owned and node.kind != "pointwise":
            raise NotFusable(node)
        return None
