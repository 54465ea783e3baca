"""Lowerings of normalisations (layer, RMS, group and batch norm) as row reductions."""

from __future__ import annotations

import math

import torch
from torch import fx

from kernelwright.tools.lower.builder import Builder, register
from kernelwright.tools.lower.dtypes import compute_type, literal
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.ir import Node
from kernelwright.tools.lower.ops_reduce import _mean, reduce


def normalize(b: Builder, x: Node, dims: tuple[int, ...], eps: float, dtype: torch.dtype,
              scale=None, shift=None, rms: bool = False) -> tuple[Node, Node, Node]:
    """``(x - mean) * rstd * scale + shift`` over ``dims``; returns (y, mean, rstd).

    ``scale``/``shift`` are ``(node, index_fn)`` pairs mapping y's index to theirs.
    """
    ct = compute_type(dtype)
    cdtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    from kernelwright.tools.lower.ir import Pointwise

    def key(idx):
        return [Ix.c(0) if i in dims else v for i, v in enumerate(idx)]

    count = math.prod(x.shape[d] for d in dims)
    if rms:
        mean = None
        ss = reduce(b, x, dims, "sum", True, cdtype, body=lambda k, idx: k.let(
            f"(({ct}){x.load(k, idx)}) * (({ct}){x.load(k, idx)})", ct))
    else:
        mean = _mean(b, x, dims, cdtype)

        def sq(k, idx):
            c = k.let(f"(({ct}){x.load(k, idx)} - {mean.load(k, key(idx))})", ct)
            return k.let(f"{c} * {c}", ct)

        ss = reduce(b, x, dims, "sum", True, cdtype, body=sq)
        ss.deps.append(mean)
        ss.centred = mean.deps[0]
    rstd = b.add(Pointwise(ss.shape, cdtype, [ss], cost=2, fn=lambda k, idx: k.let(
        k.call("rsqrt", ct, f"{ss.load(k, idx)} / {literal(count, cdtype)} + "
                       f"{literal(eps, cdtype)}"), ct)))
    deps = [x, rstd] + ([mean] if mean is not None else [])
    deps += [t[0] for t in (scale, shift) if t is not None]

    def out(k, idx):
        v = f"(({ct}){x.load(k, idx)})"
        if mean is not None:
            v = f"({v} - {mean.load(k, key(idx))})"
        v = f"{v} * {rstd.load(k, key(idx))}"
        if scale is not None:
            v = f"{v} * (({ct}){scale[0].load(k, scale[1](idx))})"
        if shift is not None:
            v = f"{v} + (({ct}){shift[0].load(k, shift[1](idx))})"
        return k.let(v, ct)

    y = b.add(Pointwise(tuple(x.shape), dtype, deps, fn=out, cost=4))
    return y, mean, rstd


@register("native_layer_norm")
def _layer_norm(b: Builder, n: fx.Node):
    x, normalized, w, bias, eps = b.arg(n.args[0]), n.args[1], b.arg(n.args[2]), \
        b.arg(n.args[3]), n.args[4]
    rank, k_ = len(x.shape), len(normalized)
    dims = tuple(range(rank - k_, rank))
    dtype = b.meta(n)[0].dtype

    def tail(idx):
        return idx[rank - k_:]

    y, mean, rstd = normalize(b, x, dims, eps, dtype,
                              (w, tail) if w is not None else None,
                              (bias, tail) if bias is not None else None)
    return y, mean, rstd


@register("rms_norm", "_fused_rms_norm")
def _rms_norm(b: Builder, n: fx.Node):
    x, normalized = b.arg(n.args[0]), n.args[1]
    w = b.arg(n.args[2]) if len(n.args) > 2 else None
    eps = n.args[3] if len(n.args) > 3 and n.args[3] is not None else torch.finfo(
        b.meta(n.args[0]).dtype).eps
    rank, k_ = len(x.shape), len(normalized)
    dims = tuple(range(rank - k_, rank))
    meta = b.meta(n)
    dtype = (meta[0] if isinstance(meta, (list, tuple)) else meta).dtype
    y, _, rstd = normalize(b, x, dims, eps, dtype, (w, lambda idx: idx[rank - k_:])
                           if w is not None else None, None, rms=True)
    return (y, rstd) if isinstance(meta, (list, tuple)) else y


_SPLIT_HXW = 16  # the shortest H x W walked as a loop of its own (a vector of 16 floats)


@register("native_group_norm")
def _group_norm(b: Builder, n: fx.Node):
    x, w, bias, N, C, HxW, G, eps = [b.arg(a) for a in n.args]
    dtype = b.meta(n)[0].dtype
    shape = tuple(x.shape)
    cg = C // G
    # a group is (cg, HxW), reduced over both: the channel is a loop of its own, so the
    # per-channel scale and shift (and a fused producer's per-channel bias) are one load per
    # channel, not a division and a gather per element (l2_21's group pass: 5.3 -> 2.3 ms).
    # A short HxW stays merged: its inner loop would be too short to vectorise.
    split = cg > 1 and HxW >= _SPLIT_HXW
    grouped = (N, G, cg, HxW) if split else (N, G, cg * HxW)
    dims = (2, 3) if split else (2,)
    from kernelwright.tools.lower.index import linear, unravel

    xg = b.view_of(x, grouped, None, lambda k, idx: unravel(linear(idx, grouped), shape))

    def chan(idx):  # grouped index -> channel
        return [idx[1] * cg + (idx[2] if split else idx[2] // HxW)]

    y, mean, rstd = normalize(b, xg, dims, eps, dtype,
                              (w, chan) if w is not None else None,
                              (bias, chan) if bias is not None else None)
    out = b.view_of(y, shape, None, lambda k, idx: unravel(linear(idx, shape), grouped))
    zeros = [Ix.c(0)] * len(dims)
    m2 = b.view_of(mean, (N, G), None, lambda k, idx: idx + zeros)
    r2 = b.view_of(rstd, (N, G), None, lambda k, idx: idx + zeros)
    return out, m2, r2


def _batch_norm(b: Builder, n: fx.Node, training: bool, functional: bool):
    args = [b.arg(a) for a in n.args]
    x, w, bias = args[0], args[1], args[2]
    name = n.target.overloadpacket.__name__
    if name == "_native_batch_norm_legit" and len(args) == 6:  # no running stats
        rm = rv = None
        training, eps = args[3], args[5]
    elif name == "_native_batch_norm_legit_no_training":
        rm, rv, eps = args[3], args[4], args[6]
        training = False
    else:
        rm, rv, training, eps = args[3], args[4], args[5], args[7]
    metas = b.meta(n)
    dtype = metas[0].dtype
    rank = len(x.shape)
    ch = lambda idx: [idx[1]]  # noqa: E731
    if training:
        dims = tuple(d for d in range(rank) if d != 1)
        y, mean, rstd = normalize(b, x, dims, eps, dtype, (w, ch) if w is not None else None,
                                  (bias, ch) if bias is not None else None)
        C = x.shape[1]
        flat_m = b.view_of(mean, (C,), None, lambda k, idx: [Ix.c(0), idx[0]] + [
            Ix.c(0)] * (rank - 2))
        flat_r = b.view_of(rstd, (C,), None, lambda k, idx: [Ix.c(0), idx[0]] + [
            Ix.c(0)] * (rank - 2))
        outs = [y, flat_m, flat_r]
        if name == "_native_batch_norm_legit_functional":
            outs += [rm, rv]  # running stats: not updated by the lowered program
        return tuple(outs)
    ct = compute_type(dtype)

    def out(k, idx):
        c = [idx[1]]
        v = f"((({ct}){x.load(k, idx)} - ({ct}){rm.load(k, c)}) * " + k.call(
            "rsqrt", ct, f"({ct}){rv.load(k, c)} + {literal(eps, dtype)}") + ")"
        if w is not None:
            v = f"{v} * ({ct}){w.load(k, c)}"
        if bias is not None:
            v = f"{v} + ({ct}){bias.load(k, c)}"
        return k.let(v, ct)

    from kernelwright.tools.lower.ir import Pointwise

    deps = [t for t in (x, rm, rv, w, bias) if t is not None]
    y = b.add(Pointwise(tuple(x.shape), dtype, deps, fn=out, cost=4))
    empty = b.pointwise((0,), dtype, [], lambda k, v: "0")
    return (y, empty, empty)


@register("_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
          "_native_batch_norm_legit_functional", "native_batch_norm")
def _bn(b: Builder, n: fx.Node):
    return _batch_norm(b, n, True, False)
