"""Fusion legality, decided by the scheduler before anything is emitted.

A kernel holds what its group computes itself (a reduction's result, a GEMM's or scan's
element, an epilogue's value) in registers for the kernel's own index only. A member that
reads such a value at another index (a flipped cumsum, a convolution read at a shifted
position) cannot be fused: it needs the value written to memory first.

:func:`fusable` runs the members' IR under :class:`Recorder`, an ops handler that emits
nothing and only checks, like the code generator would, that every read of a
group-computed value hits the index at which the group binds it. :func:`split_last` moves
the last member out; ``schedule.legalize`` repeats both until every group is legal.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

from kernelwright.tools.lower.index import Ix, linear, same_index, unravel
from kernelwright.tools.lower.ir import Node, Reduction


class _Unfusable(Exception):
    pass


class Recorder:
    """An ops handler (``ops.Ops``) that builds no text: loads and math are opaque names;
    ``lookup`` of a group-computed value at an unbound index stops the run."""

    simd = False  # no pragmas to choose: a body takes its plain (scalar) path

    def __init__(self, buffers: dict[int, str], owned: set[int]) -> None:
        self.realized = buffers
        self.owned = owned
        self.bound: dict[int, list[list[Ix]]] = {}
        self.counter = 0

    def emit(self, line: str) -> None:
        pass

    def fresh(self, prefix: str = "t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def let(self, expr: str, ctype: str) -> str:
        return self.fresh()

    def var(self, ctype: str, init: str, prefix: str = "a") -> str:
        return self.fresh(prefix)

    @contextmanager
    def block(self, header: str) -> Iterator[None]:
        yield

    @contextmanager
    def loop(self, name: str, size: int) -> Iterator[Ix]:
        yield Ix.var(self.fresh(name), size)

    def load_buffer(self, name: str, node: Node, idx: list[Ix]) -> str:
        return self.fresh("ld")

    def call(self, name: str, ctype: str, *args: str) -> str:
        return self.fresh("f")

    def max_nan(self, a: str, b: str) -> str:
        return self.fresh("f")

    def min_nan(self, a: str, b: str) -> str:
        return self.fresh("f")

    def in_simd_loop(self) -> bool:
        return False

    def bind(self, node: Node, key: list[Ix]) -> None:
        self.bound.setdefault(node.id, []).append(key)

    def lookup(self, node: Node, key: list[Ix]) -> str | None:
        for b in self.bound.get(node.id, []):
            if same_index(b, key):
                return "reg"
        if node.id in self.owned and node.kind != "pointwise":
            raise _Unfusable(node.name)
        return None


def fusable(grp, buffers: set[int]) -> bool:
    """Whether ``grp``'s members read group-computed values only where the kernel holds
    them. ``buffers``: ids of the nodes that live in memory (realized nodes and inputs)."""
    if grp.kind == "pointwise" or not (grp.epilogue or grp.outer or len(grp.main) > 1):
        return True
    own = {n.id for n in grp.nodes}
    rec = Recorder({i: "buf" for i in buffers if i not in own}, own)
    try:
        if grp.kind == "rows":
            _rows(rec, grp)
        else:
            _anchor(rec, grp)
    except _Unfusable:
        return False
    return True


def _declared(shape: tuple[int, ...], prefix: str) -> list[Ix]:
    """The multi-index a unit number unravels to, as the emitters declare it."""
    n = math.prod(shape)
    out = []
    for j, e in enumerate(unravel(Ix.atom(f"{prefix}u", (0, max(0, n - 1))), shape)):
        out.append(e if e.is_const else Ix.atom(f"{prefix}{j}", (0, shape[j] - 1)))
    return out


def _epilogue(rec: Recorder, shape, idx: list[Ix], nodes: list[Node]) -> None:
    flat = linear(idx, shape)
    for e in nodes:
        at = idx if tuple(e.shape) == tuple(shape) else unravel(flat, e.shape)
        e.load(rec, at)  # type: ignore[arg-type]
        rec.bind(e, e.key(at))


def _rows(rec: Recorder, grp) -> None:
    dom: Reduction = grp.domain
    outer_shape = tuple(dom.src_shape[d] for d in dom.outer_dims)
    outer = _declared(outer_shape, "o")
    for r in grp.main:
        red = [Ix.var(rec.fresh("r"), s) for s in r.red_sizes]
        assert r.body is not None
        r.body(rec, r.full_index(outer, red))  # type: ignore[arg-type]
        rec.bind(r, outer)
    if grp.epilogue:
        red = [Ix.var(rec.fresh("r"), s) for s in dom.red_sizes]
        _epilogue(rec, dom.src_shape, dom.full_index(outer, red), grp.epilogue)
    oflat = linear(outer, outer_shape)
    for e in grp.outer:
        e.load(rec, unravel(oflat, e.shape))  # type: ignore[arg-type]


def _anchor(rec: Recorder, grp) -> None:
    """Scans, GEMM and convolution bind their element at its own index."""
    node = grp.main[0]
    idx = _declared(tuple(node.shape), "i")
    rec.bind(node, idx)
    _epilogue(rec, node.shape, idx, grp.epilogue)


def split_last(grp):
    """``(grp without its last fused member, that member's own group)``, or None."""
    from kernelwright.tools.lower.schedule import Group

    if grp.outer:
        node = grp.outer.pop()
    elif grp.epilogue:
        node = grp.epilogue.pop()
    elif len(grp.main) > 1:
        return grp, Group("rows", [grp.main.pop()])
    else:
        return None
    return grp, Group("pointwise", [node])
