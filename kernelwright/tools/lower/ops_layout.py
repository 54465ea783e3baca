"""Lowerings of layout operators as index maps: nothing here moves data."""

from __future__ import annotations

import math

import torch
from torch import fx

from kernelwright.errors import LoweringError
from kernelwright.tools.lower.builder import Builder, register
from kernelwright.tools.lower.index import Ix, linear, unravel
from kernelwright.tools.lower.ir import Node, Pointwise


def _norm(d: int, rank: int) -> int:
    return d + rank if d < 0 else d


@register("view", "_unsafe_view", "reshape", "view_copy", "flatten", "unflatten",
          "prims.reshape", "prims.collapse_view", "prims.collapse")
def _view(b: Builder, n: fx.Node):
    x = b.arg(n.args[0])
    shape, _ = b.out_spec(n)
    if tuple(x.shape) == shape:
        return x
    src = tuple(x.shape)
    return b.view_of(x, shape, None, lambda k, idx: unravel(linear(idx, shape), src))


@register("as_strided", "as_strided_copy")
def _as_strided(b: Builder, n: fx.Node):
    args, _ = b.args(n)
    x, stride = args[0], args[2]
    offset = args[3] if len(args) > 3 and args[3] is not None else 0
    shape, _ = b.out_spec(n)
    src = tuple(x.shape)

    def m(k, idx):
        flat = Ix.c(offset)
        for i, st in zip(idx, stride, strict=True):
            flat = flat + i * st
        return unravel(flat, src)

    return b.view_of(x, shape, None, m)


@register("permute", "permute_copy")
def _permute(b: Builder, n: fx.Node):
    x = b.arg(n.args[0])
    dims = [_norm(d, len(x.shape)) for d in n.args[1]]
    shape, _ = b.out_spec(n)
    inv = [0] * len(dims)
    for out_d, in_d in enumerate(dims):
        inv[in_d] = out_d
    return b.view_of(x, shape, None, lambda k, idx: [idx[inv[d]] for d in range(len(dims))])


@register("t", "transpose")
def _transpose(b: Builder, n: fx.Node):
    x = b.arg(n.args[0])
    rank = len(x.shape)
    d0, d1 = (0, 1) if len(n.args) == 1 else (_norm(n.args[1], rank), _norm(n.args[2], rank))
    shape, _ = b.out_spec(n)
    if rank < 2:
        return x

    def m(k, idx):
        out = list(idx)
        out[d0], out[d1] = idx[d1], idx[d0]
        return out

    return b.view_of(x, shape, None, m)


@register("expand", "expand_copy", "broadcast_to")
def _expand(b: Builder, n: fx.Node):
    x = b.arg(n.args[0])
    shape, _ = b.out_spec(n)
    src = tuple(x.shape)
    off = len(shape) - len(src)
    return b.view_of(x, shape, None, lambda k, idx: [
        Ix.c(0) if s == 1 else idx[off + j] for j, s in enumerate(src)])


@register("prims.broadcast_in_dim")
def _broadcast_in_dim(b: Builder, n: fx.Node):
    x = b.arg(n.args[0])
    dims = list(n.args[2])
    shape, _ = b.out_spec(n)
    src = tuple(x.shape)
    return b.view_of(x, shape, None, lambda k, idx: [
        Ix.c(0) if src[j] == 1 else idx[d] for j, d in enumerate(dims)])


@register("unsqueeze", "squeeze", "unsqueeze_copy", "squeeze_copy", "prims.squeeze")
def _squeeze(b: Builder, n: fx.Node):
    x = b.arg(n.args[0])
    shape, _ = b.out_spec(n)
    if tuple(x.shape) == shape:
        return x
    src = tuple(x.shape)
    return b.view_of(x, shape, None, lambda k, idx: unravel(linear(idx, shape), src))


@register("select", "select_copy")
def _select(b: Builder, n: fx.Node):
    x = b.arg(n.args[0])
    dim = _norm(n.args[1], len(x.shape))
    i = n.args[2]
    i = i + x.shape[dim] if i < 0 else i
    shape, _ = b.out_spec(n)
    return b.view_of(x, shape, None, lambda k, idx: idx[:dim] + [Ix.c(i)] + idx[dim:])


@register("slice", "slice_copy")
def _slice(b: Builder, n: fx.Node):
    x = b.arg(n.args[0])
    args = list(n.args) + [None] * 5
    dim = _norm(args[1] or 0, len(x.shape))
    size = x.shape[dim]
    start, step = args[2], args[4] or 1
    start = 0 if start is None else (start + size if start < 0 else start)
    start = max(0, min(start, size))
    shape, _ = b.out_spec(n)
    if tuple(x.shape) == shape:
        return x
    return b.view_of(x, shape, None, lambda k, idx: (
        idx[:dim] + [idx[dim] * step + start] + idx[dim + 1:]))


@register("unfold", "unfold_copy")
def _unfold(b: Builder, n: fx.Node):
    """``x.unfold(dim, size, step)``: windows of ``dim`` as a new last dim; element
    ``[..., w, ..., j]`` is ``x[..., w * step + j, ...]``."""
    x = b.arg(n.args[0])
    dim = _norm(n.args[1], max(1, len(x.shape)))
    step = n.args[3]
    shape, _ = b.out_spec(n)
    if not x.shape:  # a 0-d tensor unfolds to one window of itself
        return b.view_of(x, shape, None, lambda k, idx: [])
    return b.view_of(x, shape, None, lambda k, idx: (
        idx[:dim] + [idx[dim] * step + idx[-1]] + idx[dim + 1:-1]))


@register("flip")
def _flip(b: Builder, n: fx.Node):
    x = b.arg(n.args[0])
    dims = {_norm(d, len(x.shape)) for d in n.args[1]}
    shape, _ = b.out_spec(n)
    return b.view_of(x, shape, None, lambda k, idx: [
        (Ix.c(shape[d] - 1) - i) if d in dims else i for d, i in enumerate(idx)])


@register("roll")
def _roll(b: Builder, n: fx.Node):
    x = b.arg(n.args[0])
    shifts = n.args[1]
    dims = n.args[2] if len(n.args) > 2 else []
    shape, _ = b.out_spec(n)
    if not dims:
        total = math.prod(shape)
        s = shifts[0] % total
        return b.view_of(x, shape, None, lambda k, idx: unravel(
            (linear(idx, shape) + (total - s)) % total, shape))
    table = {_norm(d, len(shape)): s % shape[_norm(d, len(shape))]
             for d, s in zip(dims, shifts, strict=True)}
    return b.view_of(x, shape, None, lambda k, idx: [
        (i + (shape[d] - table[d])) % shape[d] if d in table else i for d, i in enumerate(idx)])


@register("repeat")
def _repeat(b: Builder, n: fx.Node):
    x = b.arg(n.args[0])
    shape, _ = b.out_spec(n)
    src = tuple(x.shape)
    off = len(shape) - len(src)
    return b.view_of(x, shape, None, lambda k, idx: [
        Ix.c(0) if s == 1 else idx[off + j] % s for j, s in enumerate(src)])


@register("cat")
def _cat(b: Builder, n: fx.Node):
    parts = [p for p in b.arg(n.args[0]) if p.numel > 0 or len(p.shape) > 1]
    shape, dtype = b.out_spec(n)
    dim = _norm(n.args[1] if len(n.args) > 1 else 0, len(shape))
    parts = [p for p in parts if len(p.shape) == len(shape)]
    if len(parts) == 1:
        return parts[0]
    offsets, acc = [], 0
    for p in parts:
        offsets.append(acc)
        acc += p.shape[dim]
    from kernelwright.tools.lower.dtypes import compute_type

    ct = compute_type(dtype)

    def body(k, idx):
        res = k.var(ct, "0", "c")
        i = idx[dim]
        for j, (p, off) in enumerate(zip(parts, offsets, strict=True)):
            cond = f"({i.render()}) < {off + p.shape[dim]}"
            head = f"if ({cond})" if j == 0 else (f"else if ({cond})" if j < len(parts) - 1
                                                  else "else")
            with k.block(head):
                v = p.load(k, idx[:dim] + [i - off] + idx[dim + 1:])
                k.emit(f"{res} = ({ct}){v};")
        return res

    return b.add(Pointwise(shape, dtype, parts, fn=body, cost=1))


@register("constant_pad_nd")
def _pad(b: Builder, n: fx.Node):
    x = b.arg(n.args[0])
    pad = list(n.args[1])
    value = n.args[2] if len(n.args) > 2 else 0
    shape, dtype = b.out_spec(n)
    from kernelwright.tools.lower.dtypes import compute_type, literal

    ct = compute_type(dtype)
    rank = len(shape)
    lows = {rank - 1 - i // 2: pad[i] for i in range(0, len(pad), 2)}

    def body(k, idx):
        src_idx, conds = [], []
        for d, i in enumerate(idx):
            lo = lows.get(d, 0)
            j = i - lo
            if lo != 0 or shape[d] != x.shape[d]:
                conds.append(f"({j.render()}) >= 0 && ({j.render()}) < {x.shape[d]}")
            src_idx.append(j)
        if not conds:
            return x.load(k, src_idx)
        res = k.var(ct, literal(value, dtype), "p")
        with k.block(f"if ({' && '.join(conds)})"):
            k.emit(f"{res} = ({ct}){x.load(k, src_idx)};")
        return res

    return b.add(Pointwise(shape, dtype, [x], fn=body))


def _data_index(k, index: Node, idx: list[Ix], size: int) -> Ix:
    """A data-dependent index (wrapped if negative) as an atom with range [0, size)."""
    v = index.load(k, idx)
    w = k.let(f"(int)({v} < 0 ? {v} + {size} : {v})", "int")
    return Ix.atom(w, (0, size - 1))


@register("gather")
def _gather(b: Builder, n: fx.Node):
    x, dim, index = b.arg(n.args[0]), n.args[1], b.arg(n.args[2])
    shape, _ = b.out_spec(n)
    dim = _norm(dim, len(x.shape))

    def m(k, idx):
        j = _data_index(k, index, idx, x.shape[dim])
        return idx[:dim] + [j] + idx[dim + 1:]

    node = b.view_of(x, shape, None, m)
    node.deps.append(index)
    return node


@register("index_select")
def _index_select(b: Builder, n: fx.Node):
    x, dim, index = b.arg(n.args[0]), n.args[1], b.arg(n.args[2])
    dim = _norm(dim, len(x.shape))
    shape, _ = b.out_spec(n)

    def m(k, idx):
        j = _data_index(k, index, [idx[dim]] if index.shape else [], x.shape[dim])
        return idx[:dim] + [j] + idx[dim + 1:]

    node = b.view_of(x, shape, None, m)
    node.deps.append(index)
    return node


@register("embedding")
def _embedding(b: Builder, n: fx.Node):
    w, index = b.arg(n.args[0]), b.arg(n.args[1])
    shape, _ = b.out_spec(n)
    r = len(index.shape)

    def m(k, idx):
        return [_data_index(k, index, idx[:r], w.shape[0]), idx[r]]

    node = b.view_of(w, shape, None, m)
    node.deps.append(index)
    return node


@register("index", "_unsafe_index")
def _index(b: Builder, n: fx.Node):
    x = b.arg(n.args[0])
    indices = b.arg(n.args[1])
    shape, _ = b.out_spec(n)
    present = [i for i, t in enumerate(indices) if t is not None]
    if any(t.dtype == torch.bool for t in indices if t is not None):
        raise LoweringError("boolean-mask indexing (x[mask]) has a data-dependent shape; "
                            "use torch.where(mask, x, 0) in the reference instead")
    contiguous = present == list(range(present[0], present[-1] + 1))
    if not contiguous:
        raise LoweringError("advanced indexing with non-adjacent index tensors is not "
                            "supported; index one dimension at a time in the reference")
    bshape = torch.broadcast_shapes(*[tuple(indices[i].shape) for i in present])
    nb, first = len(bshape), present[0]

    def m(k, idx):
        bidx = idx[first:first + nb]
        from kernelwright.tools.lower.builder import broadcast_index

        out = idx[:first]
        for d in present:
            t = indices[d]
            out.append(_data_index(k, t, broadcast_index(bidx, tuple(t.shape)), x.shape[d]))
        return out + idx[first + nb:]

    node = b.view_of(x, shape, None, m)
    node.deps.extend(indices[i] for i in present)
    return node


@register("split", "split_with_sizes", "unbind", "chunk", "tensor_split")
def _split(b: Builder, n: fx.Node):
    x = b.arg(n.args[0])
    metas = b.meta(n)
    name = n.target.overloadpacket.__name__
    dim = n.args[1] if name == "unbind" and len(n.args) > 1 else (
        n.args[2] if len(n.args) > 2 else 0)
    if name == "unbind":
        dim = n.args[1] if len(n.args) > 1 else 0
    dim = _norm(dim, len(x.shape))
    outs, start = [], 0
    for meta in metas:
        shape = tuple(int(s) for s in meta.shape)
        s0 = start
        if name == "unbind":
            outs.append(b.view_of(x, shape, None, lambda k, idx, s0=s0: (
                idx[:dim] + [Ix.c(s0)] + idx[dim:])))
            start += 1
        else:
            outs.append(b.view_of(x, shape, None, lambda k, idx, s0=s0: (
                idx[:dim] + [idx[dim] + s0] + idx[dim + 1:])))
            start += shape[dim]
    return tuple(outs)


@register("tril", "triu")
def _tri(b: Builder, n: fx.Node):
    x = b.arg(n.args[0])
    diag = n.args[1] if len(n.args) > 1 else 0
    shape, dtype = b.out_spec(n)
    lower = n.target.overloadpacket.__name__ == "tril"

    def body(k, idx):
        r, c = idx[-2].render(), idx[-1].render()
        cond = f"({c}) - ({r}) <= {diag}" if lower else f"({c}) - ({r}) >= {diag}"
        v = x.load(k, idx)
        return k.let(f"(({cond}) ? {v} : ({k and ''}0))", x.ctype)

    return b.add(Pointwise(shape, dtype, [x], fn=body))
