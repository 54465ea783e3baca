"""The scheduler: which nodes get a buffer, and which kernel (fusion group) computes them.

Rules, in order:
1. Graph outputs, scans and anchors (GEMM, convolution, attention) are realized; so are
   reductions.
2. A pointwise node is recomputed where it is read (fused into each reader) unless it is
   expensive and read by several nodes (cost >= 8: pooling windows, long chains), or it
   computes an operand of an anchor (an anchor reads each operand element many times), or
   its inlined expression grows past ``INLINE_LIMIT`` (a recurrence's long chain).
3. Reductions over the same domain (same source shape, same reduced dims) join one *row
   group* when everything they read is computed earlier or in the group (softmax: max and
   sum; layer norm: mean and variance) and the realized pointwise nodes with the domain's
   element count (or the group's output count) that read them become its epilogues.
4. Realized pointwise nodes that read an anchor (or scan) and have its element count become
   its epilogue (bias, activation, scaling, residual adds).
5. Fusion legality (``fusion.fusable``): a member that reads a value the group computes at
   another index than the kernel's own cannot be fused; ``legalize`` moves the last member
   into a kernel of its own (``Group.split_off``) until every group is legal, before
   anything is emitted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kernelwright.tools.lower.fusion import fusable, split_last
from kernelwright.tools.lower.graph import LoweredGraph
from kernelwright.tools.lower.ir import (
    Attention,
    Conv,
    Gemm,
    Input,
    Node,
    Pointwise,
    Reduction,
    Scan,
)

RECOMPUTE_LIMIT = 8
INLINE_LIMIT = 512  # cost units one element's recomputed expression may reach (rule 2)
ANCHORS = (Gemm, Conv, Attention)  # read each operand element many times


@dataclass(eq=False)
class Group:
    """One kernel: its anchor or reductions, and the nodes written from its registers."""

    kind: str  # pointwise | rows | scan | gemm | conv | attention | vendor_gemm
    main: list[Node]  # the reductions of a row group, or the single anchor/scan/pointwise
    epilogue: list[Node] = field(default_factory=list)
    outer: list[Node] = field(default_factory=list)  # row groups: outputs of outer shape
    name: str = ""
    # members moved out by ``legalize`` (each a kernel of its own, emitted right after this
    # one in this order, with no schedule parameters of its own)
    split_off: list[Group] = field(default_factory=list)

    @property
    def nodes(self) -> list[Node]:
        return self.main + self.epilogue + self.outer

    @property
    def domain(self) -> Node:
        return self.main[0]


@dataclass
class Schedule:
    groups: list[Group]
    realized: set[int]
    users: dict[int, list[Node]]


def users_of(g: LoweredGraph) -> dict[int, list[Node]]:
    users: dict[int, list[Node]] = {}
    for n in g.nodes:
        for d in n.deps:
            users.setdefault(d.id, []).append(n)
    return users


def initial_realized(g: LoweredGraph, users: dict[int, list[Node]]) -> set[int]:
    real = {n.id for n in g.outputs}
    for n in g.nodes:
        if isinstance(n, (Scan, Gemm, Conv, Attention, Reduction)):
            real.add(n.id)
        elif isinstance(n, Pointwise):
            us = users.get(n.id, [])
            if n.realize:
                real.add(n.id)
            if len(us) > 1 and n.cost >= RECOMPUTE_LIMIT:
                real.add(n.id)
            if any(isinstance(u, ANCHORS) for u in us) and _computes(n):
                real.add(n.id)
    _bound_inlining(g, real)
    return real


def _bound_inlining(g: LoweredGraph, real: set[int]) -> None:
    """Realize a pointwise node whose inlined expression (its cost plus its recomputed
    inputs', counted along every path) exceeds ``INLINE_LIMIT``: an unrolled LSTM's cell
    state, a chain of cheap steps 64 long, was recomputed whole in one 20 MB kernel."""
    size: dict[int, int] = {}
    for n in g.nodes:
        if not isinstance(n, Pointwise) or n.id in real:
            continue
        total = n.cost + sum(size.get(d.id, 0) for d in n.deps)
        if total > INLINE_LIMIT:
            real.add(n.id)
            total = 0
        size[n.id] = total


def epilogue_cost(grp: Group) -> int:
    """The arithmetic an anchor group's epilogue does per element: the ``cost`` of its
    members and of the pointwise nodes they recompute inline, up to the anchor."""
    stack, seen, total = list(grp.epilogue), {grp.main[0].id}, 0
    while stack:
        x = stack.pop()
        if x.id in seen or not isinstance(x, Pointwise):
            continue
        seen.add(x.id)
        total += x.cost
        stack.extend(x.deps)
    return total


def _computes(n: Node) -> bool:
    """True if ``n`` does arithmetic (not only index maps over buffers)."""
    stack, seen = [n], set()
    while stack:
        x = stack.pop()
        if x.id in seen or isinstance(x, Input):
            continue
        seen.add(x.id)
        if not isinstance(x, Pointwise) or x.cost > 0:
            return True
        stack.extend(x.deps)
    return False


def realized_deps(n: Node, real: set[int]) -> set[int]:
    """Realized nodes ``n`` reads directly or through recomputed (inline) nodes."""
    out: set[int] = set()
    stack, seen = list(n.deps), set()
    while stack:
        x = stack.pop()
        if x.id in seen:
            continue
        seen.add(x.id)
        if isinstance(x, Input):
            continue
        if x.id in real:
            out.add(x.id)
        else:
            stack.extend(x.deps)
    return out


def kind_of(n: Node) -> str:
    return {"reduction": "rows", "scan": "scan", "gemm": "gemm", "conv": "conv",
            "attention": "attention"}.get(n.kind, "pointwise")


def schedule(g: LoweredGraph, fuse: bool = True) -> Schedule:
    users = users_of(g)
    real = initial_realized(g, users)
    order = [n for n in g.nodes if n.id in real]
    groups = [Group(kind_of(n), [n]) for n in order]
    if fuse:
        inputs = [i for i in g.user_inputs if i is not None] + list(g.state) + [
            i for i, _ in g.consts]
        groups = legalize(_fuse(groups, real), real | {i.id for i in inputs})
    return Schedule(groups, real, users)


def legalize(groups: list[Group], buffers: set[int]) -> list[Group]:
    """Split members off every group until ``fusion.fusable`` holds for it."""
    for grp in groups:
        while not fusable(grp, buffers):
            parts = split_last(grp)
            if parts is None:  # a single node: nothing to split (emission reports it)
                break
            grp.split_off.insert(0, parts[1])
    return groups


def _fuse(groups: list[Group], real: set[int]) -> list[Group]:
    """Merge row reductions of one domain, then attach epilogues to rows/anchors/scans."""
    out: list[Group] = []
    where: dict[int, int] = {}  # node id -> position of its group in ``out``
    for grp in groups:
        node = grp.main[0]
        deps = realized_deps(node, real)
        target = _host_for(node, deps, out, where)
        if target is None:
            where[node.id] = len(out)
            out.append(grp)
            continue
        host = out[target]
        if isinstance(node, Reduction) and host.kind == "rows" and _same_domain(host, node):
            host.main.append(node)
        elif host.kind == "rows" and node.numel == host.domain.numel * 1 and _outer_sized(
                host, node):
            host.outer.append(node)
        else:
            host.epilogue.append(node)
        where[node.id] = target
    return out


def _host_for(node: Node, deps: set[int], out: list[Group], where: dict[int, int]
              ) -> int | None:
    """The latest group ``node`` may join (it reads that group and only earlier ones)."""
    if not deps:
        return None
    last = max(where[d] for d in deps if d in where) if any(d in where for d in deps) else None
    if last is None:
        return None
    host = out[last]
    if host.kind == "pointwise" or host.kind == "vendor_gemm":
        return None
    if isinstance(node, Reduction):
        return last if host.kind == "rows" and _same_domain(host, node) else None
    if not isinstance(node, Pointwise):
        return None
    if host.kind == "rows":
        dom = host.domain
        if node.numel == _src_numel(dom) or _outer_sized(host, node):
            return last
        return None
    anchor = host.main[0]
    return last if node.numel == anchor.numel else None


def _src_numel(r: Reduction) -> int:
    n = 1
    for s in r.src_shape:
        n *= s
    return n


def _same_domain(host: Group, r: Reduction) -> bool:
    d = host.domain
    return isinstance(d, Reduction) and d.src_shape == r.src_shape and d.red_dims == r.red_dims


def _outer_sized(host: Group, node: Node) -> bool:
    dom = host.domain
    return node.numel == dom.numel and node.numel != _src_numel(dom)
