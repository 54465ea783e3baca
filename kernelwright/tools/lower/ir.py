"""The lowered program's IR: tensors defined by how to compute one element at an index.

Every node has a shape and dtype and a ``compute(k, idx)`` that asks the ops handler ``k``
(``ops.Ops``: code generation's kernel context, or an analysis' recorder) for statements and
returns the C name of the element at multi-index ``idx``. Layout
operators are pointwise nodes whose ``compute`` maps the index and loads their input, so
view/permute/expand/slice/cat/flip/gather never move data. The scheduler decides which nodes
are *realized* (written to a buffer by a kernel of their own group); every other node is
recomputed where it is read.

Kinds: ``input`` (a buffer the caller passes), ``pointwise`` (incl. layout and windowed
pooling), ``reduction`` (over any set of dims), ``scan`` (cumulative along one dim),
``gemm`` (batched A @ B) and ``conv`` (N-d convolution, transposed or not).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from kernelwright.errors import LoweringError
from kernelwright.tools.lower.dtypes import compute_type, literal
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.ops import Ops

_ids = itertools.count()
Body = Callable[[Ops, list[Ix]], str]


@dataclass(eq=False)
class Node:
    """One tensor of the lowered program."""

    shape: tuple[int, ...]
    dtype: torch.dtype
    deps: list[Node] = field(default_factory=list)
    name: str = ""
    id: int = field(default_factory=lambda: next(_ids))
    kind: str = "pointwise"
    cost: int = 1  # rough arithmetic per element, for recompute-or-realize decisions

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def ctype(self) -> str:
        return compute_type(self.dtype)

    def load(self, k: Ops, idx: list[Ix]) -> str:
        """The element at ``idx``: from a buffer, a bound register, or computed here."""
        if len(idx) != len(self.shape):
            raise LoweringError(f"internal: {self.name} indexed with {len(idx)} dims, "
                                f"has {len(self.shape)}; report this as a bug")
        if self.id in k.realized:
            return k.load_buffer(k.realized[self.id], self, idx)
        reg = k.lookup(self, self.key(idx))
        if reg is not None:
            return reg
        return self.compute(k, idx)

    def key(self, idx: list[Ix]) -> list[Ix]:
        return idx

    def compute(self, k: Ops, idx: list[Ix]) -> str:
        raise LoweringError(f"internal: {self.kind} node {self.name} must be realized")


@dataclass(eq=False)
class Input(Node):
    """A buffer given to the program: a user input, a parameter, a buffer or a constant."""

    kind: str = "input"
    role: str = "user"  # user | param | const
    target: str = ""  # state_dict name for params/buffers, position for user inputs


@dataclass(eq=False)
class Pointwise(Node):
    """``out[idx] = fn(k, idx)``: arithmetic, casts, layout maps, windowed pooling.

    ``interior``: the inclusive range of the last index over which ``fn`` needs no bounds
    handling (a pooling window inside its input); an emitter that loops over the last dim may
    give that stretch its own loop, whose index range lets ``fn`` drop its clamps and masks.
    """

    fn: Body | None = None
    interior: tuple[int, int] | None = None
    realize: bool = False  # always its own buffer, never inlined (a separable pool's first step)

    def compute(self, k: Ops, idx: list[Ix]) -> str:
        assert self.fn is not None
        return self.fn(k, idx)


REDUCE_INIT = {"sum": 0, "prod": 1, "max": -math.inf, "min": math.inf, "any": 0, "all": 1}


@dataclass(eq=False)
class Reduction(Node):
    """``out[o] = combine_{r} body(o, r)`` over ``red_dims`` of ``src_shape``.

    ``kind``: sum, prod, max, min, any, all, argmax, argmin. ``keepdim`` keeps reduced dims
    as size 1. For arg-reductions ``flat_arg`` numbers positions over all reduced dims.
    """

    kind: str = "reduction"
    op: str = "sum"
    src_shape: tuple[int, ...] = ()
    red_dims: tuple[int, ...] = ()
    keepdim: bool = False
    body: Body | None = None
    acc_dtype: torch.dtype = torch.float32
    # the node whose elements the body is (softmax's exp(x - max)): a row group may store
    # them in its epilogue's output on the way and read them back there (emit.py)
    direct: Node | None = None
    # the max reduction ``m`` of the same row when this sum's body is ``exp(t - m)``: a running
    # sum may then be rescaled by ``exp(m_old - m_new)`` (one-pass online softmax)
    online: Node | None = None
    # the sum reduction ``s`` of the same row when this sum's body is ``(v - s / count)^2``
    # with ``s`` summing ``v``: block statistics then merge in one pass (Chan et al.)
    centred: Node | None = None

    @property
    def red_sizes(self) -> list[int]:
        return [self.src_shape[d] for d in self.red_dims]

    @property
    def red_numel(self) -> int:
        return math.prod(self.red_sizes)

    @property
    def outer_dims(self) -> list[int]:
        return [d for d in range(len(self.src_shape)) if d not in self.red_dims]

    def key(self, idx: list[Ix]) -> list[Ix]:
        if self.keepdim:
            return [idx[d] for d in self.outer_dims]
        return idx

    def full_index(self, outer: list[Ix], red: list[Ix]) -> list[Ix]:
        out, oi, ri = [], iter(outer), iter(red)
        for d in range(len(self.src_shape)):
            out.append(next(ri) if d in self.red_dims else next(oi))
        return out

    def acc_ctype(self) -> str:
        return compute_type(self.acc_dtype)

    def compute(self, k: Ops, idx: list[Ix]) -> str:
        """Sequential reduction for one output element (the thread-per-row schedule)."""
        outer = self.key(idx)
        acc, pos = self.init(k)
        names = [k.fresh("r") for _ in self.red_dims]
        vars_: list[Ix] = []
        opened = []
        for name, size in zip(names, self.red_sizes, strict=True):
            cm = k.loop(name, size)
            vars_.append(cm.__enter__())
            opened.append(cm)
        assert self.body is not None
        value = self.body(k, self.full_index(outer, vars_))
        flat = _flat_red(vars_, self.red_sizes)
        self.combine(k, acc, pos, value, flat.render())
        for cm in reversed(opened):
            cm.__exit__(None, None, None)
        return self.finish(k, acc, pos)

    def init(self, k: Ops) -> tuple[str, str | None]:
        ct = self.acc_ctype()
        if self.op in ("argmax", "argmin"):
            start = -math.inf if self.op == "argmax" else math.inf
            acc = k.var(ct, literal(start, self.acc_dtype))
            return acc, k.var("long long", "0", "p")
        return k.var(ct, literal(REDUCE_INIT[self.op], self.acc_dtype)), None

    def combine(self, k: Ops, acc: str, pos: str | None, value: str, flat: str) -> None:
        ct = self.acc_ctype()
        v = f"(({ct}){value})"
        if self.op == "sum":
            k.emit(f"{acc} += {v};")
        elif self.op == "prod":
            k.emit(f"{acc} *= {v};")
        elif self.op == "max":
            k.emit(f"{acc} = {k.max_nan(acc, v)};")
        elif self.op == "min":
            k.emit(f"{acc} = {k.min_nan(acc, v)};")
        elif self.op == "any":
            k.emit(f"{acc} = {acc} || ({value} != 0);")
        elif self.op == "all":
            k.emit(f"{acc} = {acc} && ({value} != 0);")
        else:
            cmp = ">" if self.op == "argmax" else "<"
            k.emit(f"if ({v} {cmp} {acc} || ({v} != {v} && {acc} == {acc})) "
                   f"{{ {acc} = {v}; {pos} = {flat}; }}")

    def finish(self, k: Ops, acc: str, pos: str | None) -> str:
        if pos is not None:
            return pos
        return k.let(f"(({self.ctype}){acc})", self.ctype)


def _flat_red(vars_: list[Ix], sizes: list[int]) -> Ix:
    out = Ix.c(0)
    for v, s in zip(vars_, sizes, strict=True):
        out = out * s + v
    return out


@dataclass(eq=False)
class Scan(Node):
    """``out[..., i, ...] = combine_{j <= i} body(..., j, ...)`` along ``dim``."""

    kind: str = "scan"
    op: str = "sum"
    dim: int = 0
    body: Body | None = None


@dataclass(eq=False)
class Gemm(Node):
    """``out[b, m, n] = sum_k a(b, m, k) * b(b, k, n)``; ``batch`` may be empty."""

    kind: str = "gemm"
    batch: tuple[int, ...] = ()
    m: int = 1
    n: int = 1
    kdim: int = 1
    a: Body | None = None  # (k, [*batch, m, kk]) -> value
    b: Body | None = None  # (k, [*batch, kk, n]) -> value
    operands: tuple[Node, Node] | None = None  # when both operands are plain 2-D/3-D tensors


@dataclass(eq=False)
class Conv(Node):
    """N-d convolution (cross-correlation as torch defines it), transposed or not."""

    kind: str = "conv"
    x: Node | None = None
    w: Node | None = None
    bias: Node | None = None
    stride: tuple[int, ...] = ()
    padding: tuple[int, ...] = ()
    dilation: tuple[int, ...] = ()
    transposed: bool = False
    groups: int = 1
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(eq=False)
class Attention(Node):
    """Scaled dot-product attention: ``out[b, i, e] = sum_j p(b, i, j) * v(b, j, e)`` with
    ``p = softmax_j(scale * sum_d q(b, i, d) * k(b, j, d))`` over ``j < skv``, or over
    ``j <= i`` when ``causal`` (torch's top-left causal mask); ``batch`` may be empty."""

    kind: str = "attention"
    batch: tuple[int, ...] = ()
    lq: int = 1  # query rows
    skv: int = 1  # keys
    d: int = 1  # query/key width
    dv: int = 1  # value width
    scale: float = 1.0
    causal: bool = False
    qload: Body | None = None  # (k, [*batch, i, d]) -> the query element
    kload: Body | None = None  # (k, [*batch, j, d]) -> the key element
    vload: Body | None = None  # (k, [*batch, j, e]) -> the value element

