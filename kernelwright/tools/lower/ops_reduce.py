"""Lowerings of reductions, scans and the composite operators built on them
(softmax, log-softmax, var/std, vector norms, logsumexp, NLL loss); normalisations are in
``ops_norm``."""

from __future__ import annotations

import math

import torch
from torch import fx

from kernelwright.errors import LoweringError
from kernelwright.tools.lower.builder import Builder, register
from kernelwright.tools.lower.dtypes import compute_type, literal
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.ir import Node, Reduction, Scan


def _dims(dims, rank: int) -> tuple[int, ...]:
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return tuple(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    return tuple(sorted({d + rank if d < 0 else d for d in dims})) if rank else ()


# the longest run of float32 terms summed (or multiplied) in a float32 accumulator; longer
# runs accumulate in double
FLOAT_RUN = 4096


def acc_dtype_for(op: str, dtype: torch.dtype, n: int) -> torch.dtype:
    """The accumulator type of ``op`` over ``n`` elements whose result has ``dtype``."""
    if op in ("any", "all"):
        return torch.bool
    if dtype in (torch.float16, torch.bfloat16):
        return torch.float32
    if dtype == torch.float32 and op in ("sum", "prod") and n > FLOAT_RUN:
        return torch.float64
    if not dtype.is_floating_point and op in ("sum", "prod"):
        return torch.int64
    return dtype if dtype.is_floating_point or op in ("max", "min", "argmax", "argmin") \
        else torch.float32


def reduce(b: Builder, x: Node, dims: tuple[int, ...], op: str, keepdim: bool,
           out_dtype: torch.dtype, body=None, acc_dtype: torch.dtype | None = None) -> Node:
    """A reduction node of ``x`` (or of ``body(k, idx)`` over ``x``'s shape) over ``dims``."""
    src = tuple(x.shape)
    if not src:
        dims = ()
    shape = tuple(1 if d in dims else s for d, s in enumerate(src)) if keepdim else tuple(
        s for d, s in enumerate(src) if d not in dims)
    n = math.prod(src[d] for d in dims) if dims else 1
    elem = out_dtype if op not in ("argmax", "argmin") else x.dtype
    acc = acc_dtype or acc_dtype_for(op, elem, n)
    fn = body or (lambda k, idx: x.load(k, idx))
    return b.add(Reduction(shape, out_dtype, [x], op=op, src_shape=src, red_dims=dims,
                           keepdim=keepdim, body=fn, acc_dtype=acc, cost=max(1, n)))


def _pw(b: Builder, shape, dtype, ops, fn, cost=1):
    return b.pointwise(tuple(shape), dtype, ops, fn, cost=cost)


@register("sum", "mean", "amax", "amin", "prod", "any", "all", "prims.sum",
          "prims.amax", "prims.amin")
def _reduce(b: Builder, n: fx.Node):
    args, kw = b.args(n)
    x = args[0]
    name = n.target.overloadpacket.__name__.removeprefix("prims.")
    shape, dtype = b.out_spec(n)
    dims = args[1] if len(args) > 1 else kw.get("dim")
    if name == "prod" and isinstance(dims, int):
        dims = [dims]
    keep = bool(args[2]) if len(args) > 2 and isinstance(args[2], bool) else kw.get(
        "keepdim", False)
    d = _dims(dims, len(x.shape))
    op = {"amax": "max", "amin": "min", "mean": "sum"}.get(name, name)
    if name == "mean":
        count = math.prod(x.shape[i] for i in d) if d else 1
        s = reduce(b, x, d, "sum", keep, dtype, acc_dtype=acc_dtype_for("sum", dtype, count))
        return _pw(b, s.shape, dtype, [s], lambda k, v: f"({v[0]} / {literal(count, dtype)})")
    return reduce(b, x, d, op, keep, dtype)


@register("max", "min")
def _max(b: Builder, n: fx.Node):
    args, kw = b.args(n)
    x = args[0]
    name = n.target.overloadpacket.__name__
    if len(args) == 1:  # full reduction
        if isinstance(args[0], Node) and len(n.args) == 1:
            shape, dtype = b.out_spec(n)
            return reduce(b, x, _dims(None, len(x.shape)), name, False, dtype)
    if len(args) > 1 and isinstance(args[1], Node):  # binary max/min
        from kernelwright.tools.lower.ops_pointwise import _binary  # noqa: F401

        shape, dtype = b.out_spec(n)
        fn = "kw_maxn" if name == "max" else "kw_minn"
        return _pw(b, shape, dtype, [x, args[1]], lambda k, v: f"{fn}({v[0]}, {v[1]})")
    dim = args[1]
    keep = args[2] if len(args) > 2 else kw.get("keepdim", False)
    metas = b.meta(n)
    d = _dims(dim, len(x.shape))
    vals = reduce(b, x, d, name, keep, metas[0].dtype)
    idx = reduce(b, x, d, "arg" + name, keep, torch.int64)
    return vals, idx


@register("argmax", "argmin")
def _argmax(b: Builder, n: fx.Node):
    args, kw = b.args(n)
    x = args[0]
    dim = args[1] if len(args) > 1 else kw.get("dim")
    keep = args[2] if len(args) > 2 else kw.get("keepdim", False)
    shape, dtype = b.out_spec(n)
    d = _dims(dim, len(x.shape))
    if dim is None and keep:
        keep = True
    r = reduce(b, x, d, n.target.overloadpacket.__name__, keep if dim is not None else False,
               dtype)
    if tuple(r.shape) != shape:
        from kernelwright.tools.lower.index import unravel

        return b.view_of(r, shape, None, lambda k, idx: unravel(Ix.c(0), r.shape))
    return r


def _var(b: Builder, x: Node, dims, correction, keep: bool, dtype, sqrt: bool = False):
    """Two-pass variance: mean, then the centred sum of squares (exact, fusable)."""
    src = tuple(x.shape)
    count = math.prod(src[d] for d in dims) if dims else 1
    mean = _mean(b, x, dims, dtype)
    ct = compute_type(dtype)
    rdtype = dtype if dtype.is_floating_point else torch.float32

    def sq(k, idx):
        from kernelwright.tools.lower.builder import broadcast_load

        v = broadcast_load(k, x, idx, rdtype)
        m = mean.load(k, [Ix.c(0) if d in dims else i for d, i in enumerate(idx)])
        return k.let(f"(({v}) - ({m})) * (({v}) - ({m}))", ct)

    s = reduce(b, x, dims, "sum", keep, rdtype, body=sq)
    s.deps.append(mean)
    s.centred = mean.deps[0]
    denom = max(0, count - correction)
    fn = (lambda k, v: k.call("sqrt", ct, f"{v[0]} / {literal(denom, rdtype)}")) if sqrt \
        else (lambda k, v: f"({v[0]} / {literal(denom, rdtype)})")
    return _pw(b, s.shape, rdtype, [s], fn)


def _mean(b: Builder, x: Node, dims, dtype, keep: bool = True):
    count = math.prod(x.shape[d] for d in dims) if dims else 1
    s = reduce(b, x, dims, "sum", keep, dtype, acc_dtype=acc_dtype_for("sum", dtype, count))
    return _pw(b, s.shape, dtype, [s], lambda k, v: f"({v[0]} / {literal(count, dtype)})")


@register("var", "std", "var_mean", "std_mean", "prims.var")
def _var_op(b: Builder, n: fx.Node):
    args, kw = b.args(n)
    x = args[0]
    name = n.target.overloadpacket.__name__
    dims = args[1] if len(args) > 1 else kw.get("dim")
    if name == "prims.var":
        correction = args[2] if len(args) > 2 else kw.get("correction", 1)
        keep = False
    else:
        correction = kw.get("correction", 1)
        if correction is None:
            correction = 1
        if len(args) > 2 and isinstance(args[2], bool):  # unbiased form
            correction = 1 if args[2] else 0
        keep = kw.get("keepdim", args[3] if len(args) > 3 else False)
    meta = b.meta(n)
    dtype = (meta[0] if isinstance(meta, (list, tuple)) else meta).dtype
    d = _dims(dims, len(x.shape))
    v = _var(b, x, d, correction, keep, dtype, sqrt=name.startswith("std"))
    if name.endswith("_mean"):
        mean = _mean(b, x, d, dtype, keep)
        return v, mean
    return v


@register("linalg_vector_norm", "norm")
def _vector_norm(b: Builder, n: fx.Node):
    args, kw = b.args(n)
    x = args[0]
    ordv = args[1] if len(args) > 1 else kw.get("ord", 2)
    ordv = 2 if ordv is None else ordv
    dims = args[2] if len(args) > 2 else kw.get("dim")
    keep = args[3] if len(args) > 3 else kw.get("keepdim", False)
    shape, dtype = b.out_spec(n)
    d = _dims(dims, len(x.shape))
    ct = compute_type(dtype)

    def absval(k, idx):
        return k.let(k.call("fabs", ct, f"(({ct}){x.load(k, idx)})"), ct)

    if ordv in (math.inf, -math.inf):
        return reduce(b, x, d, "max" if ordv > 0 else "min", keep, dtype, body=absval)
    if ordv == 1:
        return reduce(b, x, d, "sum", keep, dtype, body=absval)
    if ordv == 2:
        s = reduce(b, x, d, "sum", keep, dtype, body=lambda k, idx: k.let(
            f"(({ct}){x.load(k, idx)}) * (({ct}){x.load(k, idx)})", ct))
        return _pw(b, s.shape, dtype, [s], lambda k, v: k.call("sqrt", ct, v[0]))
    p = float(ordv)
    s = reduce(b, x, d, "sum", keep, dtype, body=lambda k, idx: k.let(
        k.call("pow", ct, k.call("fabs", ct, f"(({ct}){x.load(k, idx)})"),
                       literal(p, dtype)), ct))
    return _pw(b, s.shape, dtype, [s], lambda k, v: k.call(
        "pow", ct, v[0], literal(1.0 / p, dtype)))


def softmax(b: Builder, x: Node, dim: int, dtype: torch.dtype, log: bool) -> Node:
    """max -> exp(x - max) -> sum -> divide (or subtract the log): one row group."""
    rank = len(x.shape)
    d = _dims(dim, rank)
    ct = compute_type(dtype)
    mx = reduce(b, x, d, "max", True, dtype)

    def shifted(k, idx):
        m = mx.load(k, [Ix.c(0) if i in d else v for i, v in enumerate(idx)])
        return k.let(f"(({ct}){x.load(k, idx)} - {m})", ct)

    from kernelwright.tools.lower.ir import Pointwise

    if log:
        s = reduce(b, x, d, "sum", True, dtype, body=lambda k, idx: k.let(
            k.call("exp", ct, shifted(k, idx)), ct))
        s.deps.append(mx)
        s.online = mx

        # log of the row's sum: a node of the row's (keepdim) shape, so a row emitter may
        # compute it once per row (cpp_rows hoists such row invariants)
        lse = b.add(Pointwise(tuple(s.shape), dtype, [s], cost=2, fn=lambda k, idx: k.let(
            k.call("log", ct, s.load(k, idx)), ct)))

        def out_log(k, idx):
            z = shifted(k, idx)
            t = lse.load(k, [Ix.c(0) if i in d else v for i, v in enumerate(idx)])
            return k.let(f"({z} - {t})", ct)

        return b.add(Pointwise(tuple(x.shape), dtype, [x, mx, lse], fn=out_log, cost=4))
    # exp(x - max) is a node of its own that the sum reads directly, so the row group can
    # keep each exponential in the output and scale it there (one exp per element, not two)
    ex = b.add(Pointwise(tuple(x.shape), dtype, [x, mx], cost=2, fn=lambda k, idx: k.let(
        k.call("exp", ct, shifted(k, idx)), ct)))
    s = reduce(b, ex, d, "sum", True, dtype)
    s.direct = ex
    s.online = mx

    def out(k, idx):
        t = s.load(k, [Ix.c(0) if i in d else v for i, v in enumerate(idx)])
        inv = k.let(f"(({ct})1 / {t})", ct)  # row invariant: one division per row
        return k.let(f"({ex.load(k, idx)} * {inv})", ct)

    return b.add(Pointwise(tuple(x.shape), dtype, [ex, s], fn=out, cost=4))


@register("_softmax", "softmax", "_log_softmax", "log_softmax")
def _softmax(b: Builder, n: fx.Node):
    args, _ = b.args(n)
    shape, dtype = b.out_spec(n)
    log = "log" in n.target.overloadpacket.__name__
    return softmax(b, args[0], args[1], dtype, log)


@register("logsumexp")
def _logsumexp(b: Builder, n: fx.Node):
    args, kw = b.args(n)
    x = args[0]
    keep = args[2] if len(args) > 2 else kw.get("keepdim", False)
    shape, dtype = b.out_spec(n)
    d = _dims(args[1] if len(args) > 1 else kw.get("dim"), len(x.shape))
    ct = compute_type(dtype)
    mx = reduce(b, x, d, "max", True, dtype)

    def key(idx):
        return [Ix.c(0) if i in d else v for i, v in enumerate(idx)]

    s = reduce(b, x, d, "sum", True, dtype, body=lambda k, idx: k.let(k.call(
        "exp", ct, f"(({ct}){x.load(k, idx)} - {_finite(k, mx.load(k, key(idx)), ct)})"), ct))
    s.deps.append(mx)
    from kernelwright.tools.lower.ir import Pointwise

    def out(k, idx):
        full = _keep_index(idx, d, keep, len(x.shape))
        m = _finite(k, mx.load(k, full), ct)
        return k.let(f"({k.call('log', ct, s.load(k, full))} + {m})", ct)

    return b.add(Pointwise(shape, dtype, [mx, s], fn=out, cost=4))


def _finite(k, m: str, ct: str) -> str:
    return k.let(f"(({m}) == KW_INF || ({m}) == -KW_INF ? ({ct})0 : ({m}))", ct)


def _keep_index(idx, dims, keep: bool, rank: int) -> list[Ix]:
    if keep:
        return [Ix.c(0) if i in dims else v for i, v in enumerate(idx)]
    it = iter(idx)
    return [Ix.c(0) if i in dims else next(it) for i in range(rank)]


@register("cumsum", "cumprod")
def _cumsum(b: Builder, n: fx.Node):
    args, kw = b.args(n)
    x, dim = args[0], args[1]
    shape, dtype = b.out_spec(n)
    op = "sum" if n.target.overloadpacket.__name__ == "cumsum" else "prod"
    rank = len(shape)
    if rank == 0:
        return x
    dim = dim + rank if dim < 0 else dim
    ct = compute_type(dtype)
    return b.add(Scan(shape, dtype, [x], op=op, dim=dim, cost=1,
                      body=lambda k, idx: k.let(f"(({ct}){x.load(k, idx)})", ct)))


@register("nll_loss_forward", "nll_loss2d_forward")
def _nll(b: Builder, n: fx.Node):
    x, target, weight, reduction, ignore = [b.arg(a) for a in n.args]
    if weight is not None:
        raise LoweringError("nll_loss/cross_entropy with class weights is not supported yet; "
                            "drop weight= or compute the weighted loss with gather in the "
                            "reference")
    metas = b.meta(n)
    dtype = metas[0].dtype
    ct = compute_type(dtype)
    rank = len(x.shape)
    from kernelwright.tools.lower.ir import Pointwise

    tshape = tuple(target.shape)

    def picked(k, idx):  # idx over target's shape
        t = target.load(k, idx)
        full = [idx[0]] + [Ix.atom(k.let(f"(int)({t} == {ignore} ? 0 : {t})", "int"),
                                   (0, x.shape[1] - 1))] + idx[1:] if rank > 1 else [
            Ix.atom(k.let(f"(int)({t} == {ignore} ? 0 : {t})", "int"), (0, x.shape[0] - 1))]
        v = x.load(k, full)
        return k.let(f"({t} == {ignore} ? ({ct})0 : -({ct}){v})", ct)

    per = b.add(Pointwise(tshape, dtype, [x, target], fn=picked, cost=2))
    valid = b.add(Pointwise(tshape, dtype, [target], fn=lambda k, idx: k.let(
        f"({target.load(k, idx)} == {ignore} ? ({ct})0 : ({ct})1)", ct)))
    dims = tuple(range(len(tshape)))
    if reduction == 0:
        total = per
        wsum = reduce(b, valid, dims, "sum", False, dtype)
    else:
        total = reduce(b, per, dims, "sum", False, dtype)
        wsum = reduce(b, valid, dims, "sum", False, dtype)
        if reduction == 1:
            total = _pw(b, (), dtype, [total, wsum], lambda k, v: f"({v[0]} / {v[1]})")
    return total, wsum
