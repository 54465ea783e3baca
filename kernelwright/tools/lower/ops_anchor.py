"""Lowerings of anchors (matrix products, convolutions) and windowed reductions (pooling)."""

from __future__ import annotations

import math

import torch
from torch import fx

from kernelwright.tools.lower.builder import Builder, register
from kernelwright.tools.lower.dtypes import compute_type, literal
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.ir import Conv, Gemm, Pointwise


def gemm(b: Builder, a, c, shape, dtype) -> Gemm:
    """``a @ c`` for 2-D (mm) or 3-D (bmm) operands."""
    batch = tuple(shape[:-2])
    m, n_ = shape[-2], shape[-1]
    kd = a.shape[-1]
    node = Gemm(tuple(shape), dtype, [a, c], batch=batch, m=m, n=n_, kdim=kd,
                a=lambda k, idx: a.load(k, idx), b=lambda k, idx: c.load(k, idx),
                operands=(a, c), cost=kd)
    return b.add(node)


@register("mm", "bmm", "matmul")
def _mm(b: Builder, n: fx.Node):
    (a, c), _ = b.args(n)
    shape, dtype = b.out_spec(n)
    return gemm(b, a, c, shape, dtype)


@register("addmm", "baddbmm")
def _addmm(b: Builder, n: fx.Node):
    args, kw = b.args(n)
    bias, a, c = args[:3]
    beta, alpha = kw.get("beta", 1), kw.get("alpha", 1)
    shape, dtype = b.out_spec(n)
    g = gemm(b, a, c, shape, dtype)
    return b.pointwise(shape, dtype, [bias, g], lambda k, v: (
        f"({literal(beta, dtype)} * {v[0]} + {literal(alpha, dtype)} * {v[1]})"
        if (beta, alpha) != (1, 1) else f"({v[0]} + {v[1]})"))


@register("mv", "dot")
def _mv(b: Builder, n: fx.Node):
    (a, c), _ = b.args(n)
    shape, dtype = b.out_spec(n)
    if n.target.overloadpacket.__name__ == "mv":
        m = a.shape[0]
        cv = b.view_of(c, (c.shape[0], 1), None, lambda k, idx: [idx[0]])
        g = gemm(b, a, cv, (m, 1), dtype)
        return b.view_of(g, shape, None, lambda k, idx: [idx[0], Ix.c(0)])
    av = b.view_of(a, (1, a.shape[0]), None, lambda k, idx: [idx[1]])
    cv = b.view_of(c, (c.shape[0], 1), None, lambda k, idx: [idx[0]])
    g = gemm(b, av, cv, (1, 1), dtype)
    return b.view_of(g, shape, None, lambda k, idx: [Ix.c(0), Ix.c(0)])


@register("convolution", "conv2d", "conv1d", "conv3d", "_convolution")
def _conv(b: Builder, n: fx.Node):
    args = [b.arg(a) for a in n.args]
    x, w, bias = args[0], args[1], args[2]
    shape, dtype = b.out_spec(n)
    nd = len(x.shape) - 2
    stride, padding, dilation = (list(args[3]), list(args[4]), list(args[5]))
    stride = stride * nd if len(stride) == 1 else stride
    padding = padding * nd if len(padding) == 1 else padding
    dilation = dilation * nd if len(dilation) == 1 else dilation
    transposed = bool(args[6]) if len(args) > 6 else False
    groups = int(args[8]) if len(args) > 8 else 1
    deps = [t for t in (x, w, bias) if t is not None]
    node = Conv(tuple(shape), dtype, deps, x=x, w=w, bias=bias, stride=tuple(stride),
                padding=tuple(padding), dilation=tuple(dilation), transposed=transposed,
                groups=groups, cost=math.prod(w.shape[1:]))
    return b.add(node)


def _pool_windows(shape_in, shape_out, kernel, stride, padding, dilation):
    return list(zip(shape_in, shape_out, kernel, stride, padding, dilation, strict=True))


def window_reduce(b: Builder, x, shape, dtype, kernel, stride, padding, dilation, op: str,
                  ceil_mode=False, count_include_pad=True, divisor=None, with_index=False):
    """Pooling over the trailing ``len(kernel)`` dims: one output element per work-item, a
    loop over its window (padding never reads memory: values read clamped and selected away,
    branch-free; the index of a max under a bounds check). A dim whose output positions all
    lie in its interior (every window inside the input, as without padding) needs neither
    clamp nor check. Where the emitter gives the last dim's interior its own loop, that dim's
    reads there are plain too, so they load as vectors instead of gathers."""
    nd = len(kernel)
    if not with_index and _separable(x.shape[-nd:], shape[-nd:], kernel, stride, padding,
                                     dilation):
        return _separated(b, x, shape, dtype, kernel, stride, dilation, op, divisor)
    ct = compute_type(dtype)
    in_sp = x.shape[-nd:]
    interiors = [_interior(*dims) for dims in zip(in_sp, shape[-nd:], kernel, stride, padding,
                                                    dilation, strict=True)]
    interior = interiors[-1]

    def bounded(out_sp) -> list[bool]:
        """Per window dim: whether a position there may fall outside the input (the output
        index's range is not inside that dim's interior)."""
        rngs = [o.range() for o in out_sp]
        return [not (iv is not None and r is not None and iv[0] <= r[0] and r[1] <= iv[1])
                for iv, r in zip(interiors, rngs, strict=True)]

    def body(k, idx, want_index=False):
        lead, out_sp = idx[:-nd], idx[-nd:]
        starts = [k.let(f"({o.render()}) * {s} - {p}", "int")
                  for o, s, p in zip(out_sp, stride, padding, strict=True)]
        init = literal(-math.inf if op == "max" else 0, dtype)
        acc = k.var(ct, init, "m" if op == "max" else "s")
        arg = k.var("long long", "-1", "p") if want_index else None
        cnt = k.var("int", "0", "c") if op != "max" else None
        loops, pos = [], []
        unroll = k.simd and k.in_simd_loop() and math.prod(kernel) <= WINDOW_UNROLL_MAX
        for d in range(nd):
            r = k.fresh("w")
            if d == nd - 1 and k.simd and not want_index and not k.in_simd_loop():
                k.emit(_window_simd(op, acc, cnt, ct))
            if unroll:
                k.emit(f"#pragma GCC unroll {kernel[d]}")
            cm = k.loop(r, kernel[d])
            rv = cm.__enter__()
            loops.append(cm)
            pos.append(k.let(f"{starts[d]} + {rv.render()} * {dilation[d]}", "int"))
        edge = bounded(out_sp)
        inside = " && ".join(f"{p} >= 0 && {p} < {s}"
                             for p, s, b in zip(pos, in_sp, edge, strict=True) if b) or "true"
        if want_index:
            with k.block(f"if ({inside})"):
                v = x.load(k, lead + [Ix.atom(p, (0, s - 1))
                                      for p, s in zip(pos, in_sp, strict=True)])
                flat = "0"
                for p, s in zip(pos, in_sp, strict=True):
                    flat = f"({flat}) * {s} + {p}"
                k.emit(f"if ({v} > {acc} || {v} != {v}) {{ {acc} = {v}; {arg} = {flat}; }}")
        else:
            # branch-free: a clamped (always valid) read and a select, so the compiler can
            # vectorise across outputs; padding contributes nothing. A dim whose output
            # index stays in its interior needs neither (a clamp and a select per element
            # read halved the speed of an 11 x 11 average pool without padding).
            reads = [Ix.atom(k.let(f"kw_min(kw_max({p}, 0), {s - 1})", "int"), (0, s - 1))
                     if b else Ix.atom(p, (0, s - 1))
                     for p, s, b in zip(pos, in_sp, edge, strict=True)]
            v = x.load(k, lead + reads)
            # & and |, not && and ||: short-circuits are branches to the vectoriser
            checks = [f"({p} >= 0) & ({p} < {s})"
                      for p, s, b in zip(pos, in_sp, edge, strict=True) if b]
            ok = k.let(" & ".join(checks), "bool") if checks else None
            if op == "max":
                take = f"(({v} > {acc}) | ({v} != {v}))"
                k.emit(f"{acc} = ({f'{ok} & ' if ok else ''}{take}) ? ({ct}){v} : {acc};")
            elif ok:
                k.emit(f"{acc} += {ok} ? ({ct}){v} : ({ct})0; {cnt} += {ok} ? 1 : 0;")
            else:
                k.emit(f"{acc} += ({ct}){v}; {cnt} += 1;")
        for cm in reversed(loops):
            cm.__exit__(None, None, None)
        return arg if want_index else finish(k, acc, cnt, starts)

    def finish(k, acc, cnt, starts):
        if op == "max":
            return acc
        if divisor:
            return k.let(f"{acc} / {literal(divisor, dtype)}", ct)
        if count_include_pad:
            # window clipped to the padded input (ceil_mode windows may pass beyond it)
            size = "1"
            for d in range(nd):
                lo = starts[d]
                hi = f"kw_min({lo} + {(kernel[d] - 1) * dilation[d] + 1}, {in_sp[d] + padding[d]})"
                size = f"{size} * ({hi} - {lo})"
            return k.let(f"{acc} / ({ct})({size})", ct)
        return k.let(f"{acc} / ({ct}){cnt}", ct)

    vals = b.add(Pointwise(tuple(shape), dtype, [x], fn=lambda k, idx: body(k, idx),
                           cost=math.prod(kernel), interior=interior))
    if not with_index:
        return vals
    ids = b.add(Pointwise(tuple(shape), torch.int64, [x],
                          fn=lambda k, idx: body(k, idx, True), cost=math.prod(kernel)))
    return vals, ids


def _separable(in_sp, out_sp, kernel, stride, padding, dilation) -> bool:
    """Whether a pool is taken in two steps (:func:`_separated`): a window of 2+ dims too
    large to unroll (``WINDOW_UNROLL_MAX``), no padding, every window whole (no ceil-mode
    window past the input), so sums, counts and maxima split per dim exactly."""
    return (len(kernel) >= 2 and math.prod(kernel) > WINDOW_UNROLL_MAX
            and not any(padding)
            and all((o - 1) * s + (k - 1) * d < i for i, o, k, s, d in zip(
                in_sp, out_sp, kernel, stride, dilation, strict=True)))


def _separated(b: Builder, x, shape, dtype, kernel, stride, dilation, op: str, divisor):
    """A pool as two: the window's leading dims reduced for every input position of the last
    dim (rows as long as the input's, so their loads are contiguous vectors), realized, then
    the last dim's window over that. Per output the work drops from the product of the window
    to its last extent plus a share of the first step; an 11 x 11 average pool over (16, 64,
    64, 64) read each window row as an 11-lane simd reduction with a horizontal sum per row
    (on this task's EPYC, compiled by hand: 2.9-5.4 ms as one step, 1.4-2.6 ms as two). A sum
    is divided once, by ``divisor`` or the window's size (every window is whole); a half
    precision pool keeps its partial sums in float, as one step accumulated them."""
    nd = len(kernel)
    lead = tuple(shape[:-nd])
    mid_shape = lead + tuple(shape[-nd:-1]) + (x.shape[-1],)
    first = [*kernel[:-1], 1]
    mid_dtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    mid = window_reduce(b, x, mid_shape, mid_dtype, first, [*stride[:-1], 1], [0] * nd,
                        [*dilation[:-1], 1], op, divisor=1 if op != "max" else None)
    mid.realize = True
    last = [1] * (nd - 1) + [kernel[-1]]
    return window_reduce(b, mid, shape, dtype, last, [1] * (nd - 1) + [stride[-1]], [0] * nd,
                         [1] * (nd - 1) + [dilation[-1]], op,
                         divisor=(divisor or math.prod(kernel)) if op != "max" else None)


# C++: a window of at most this many taps, read inside a simd loop over outputs, is unrolled
# whole. g++ vectorises an outer loop around one inner loop at most, so a 2-D or 3-D window
# left as loops kept the loop over outputs scalar: a 4 x 4 max pool after a group norm
# (KernelBench l2_85) ran 3.9 ms rolled, 3.9 ms with only its inner loop unrolled, 1.1 ms
# unrolled whole.
WINDOW_UNROLL_MAX = 64


def _window_simd(op: str, acc: str, cnt: str | None, ct: str) -> str:
    """C++: the innermost window loop as an OpenMP simd reduction, where no loop around it
    is one. Without it g++ may vectorise the loop around it instead, as an in-order float sum
    of gathered rows: an 11 x 11 average pool ran 1.5-2x slower, or not, depending only on
    the order of the terms of its index."""
    if op == "max":
        combine = "kw_maxr" if ct in ("float", "double") else "max"  # kw_maxr keeps NaN
        return f"#pragma omp simd reduction({combine}:{acc})"
    return f"#pragma omp simd reduction(+:{acc},{cnt})"


def _interior(size_in: int, size_out: int, kernel: int, stride: int, padding: int,
              dilation: int) -> tuple[int, int] | None:
    """The inclusive range of output positions whose whole window lies inside the input
    (``o * stride - padding >= 0`` and ``... + (kernel - 1) * dilation <= size_in - 1``)."""
    lo = -(-padding // stride)
    hi = min(size_out - 1, (size_in - 1 - (kernel - 1) * dilation + padding) // stride)
    return (lo, hi) if lo <= hi else None


def _tuple(v, nd):
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * nd if len(v) == 1 else v


@register("max_pool2d_with_indices", "max_pool3d_with_indices", "max_pool1d_with_indices",
          "max_pool2d", "max_pool1d", "max_pool3d")
def _maxpool(b: Builder, n: fx.Node):
    args = [b.arg(a) for a in n.args]
    x = args[0]
    name = n.target.overloadpacket.__name__
    nd = 3 if "3d" in name else (1 if "1d" in name else 2)
    kernel = _tuple(args[1], nd)
    stride = _tuple(args[2] if len(args) > 2 and args[2] else kernel, nd)
    padding = _tuple(args[3] if len(args) > 3 else 0, nd)
    dilation = _tuple(args[4] if len(args) > 4 else 1, nd)
    meta = b.meta(n)
    first = meta[0] if isinstance(meta, (list, tuple)) else meta
    shape, dtype = tuple(first.shape), first.dtype
    if isinstance(meta, (list, tuple)):
        return window_reduce(b, x, shape, dtype, kernel, stride, padding, dilation, "max",
                             with_index=True)
    return window_reduce(b, x, shape, dtype, kernel, stride, padding, dilation, "max")


@register("avg_pool1d", "avg_pool2d", "avg_pool3d")
def _avgpool(b: Builder, n: fx.Node):
    args = [b.arg(a) for a in n.args]
    x = args[0]
    name = n.target.overloadpacket.__name__
    nd = 3 if "3d" in name else (1 if "1d" in name else 2)
    kernel = _tuple(args[1], nd)
    stride = _tuple(args[2] if len(args) > 2 and args[2] else kernel, nd)
    padding = _tuple(args[3] if len(args) > 3 else 0, nd)
    ceil_mode = args[4] if len(args) > 4 else False
    cip = args[5] if len(args) > 5 else True
    div = args[6] if len(args) > 6 else None
    shape, dtype = b.out_spec(n)
    return window_reduce(b, x, shape, dtype, kernel, stride, padding, [1] * nd, "avg",
                         ceil_mode, cip, div)


@register("_adaptive_avg_pool2d", "_adaptive_avg_pool3d", "adaptive_avg_pool1d",
          "adaptive_avg_pool2d", "adaptive_avg_pool3d",
          "_adaptive_avg_pool1d", "adaptive_max_pool2d", "adaptive_max_pool1d",
          "adaptive_max_pool3d")
def _adaptive(b: Builder, n: fx.Node):
    x = b.arg(n.args[0])
    name = n.target.overloadpacket.__name__
    meta = b.meta(n)
    first = meta[0] if isinstance(meta, (list, tuple)) else meta
    shape, dtype = tuple(first.shape), first.dtype
    nd = 3 if "3d" in name else (1 if "1d" in name else 2)
    ins, outs = x.shape[-nd:], shape[-nd:]
    ct = compute_type(dtype)
    is_max = "max" in name

    def body(k, idx, want_index=False):
        lead, osp = idx[:-nd], idx[-nd:]
        los, his = [], []
        for o, i_, o_ in zip(osp, ins, outs, strict=True):
            los.append(k.let(f"(({o.render()}) * {i_}) / {o_}", "int"))
            his.append(k.let(f"((({o.render()}) + 1) * {i_} + {o_ - 1}) / {o_}", "int"))
        acc = k.var(ct, literal(-math.inf if is_max else 0, dtype), "s")
        arg = k.var("long long", "0", "p")
        loops, pos = [], []
        for d in range(nd):
            v = k.fresh("w")
            cm = k.block(f"for (int {v} = {los[d]}; {v} < {his[d]}; ++{v})")
            cm.__enter__()
            loops.append(cm)
            pos.append(v)
        src = lead + [Ix.atom(p, (0, s - 1)) for p, s in zip(pos, ins, strict=True)]
        val = x.load(k, src)
        if is_max:
            flat = "0"
            for p, s in zip(pos, ins, strict=True):
                flat = f"({flat}) * {s} + {p}"
            k.emit(f"if ({val} > {acc} || {val} != {val}) {{ {acc} = {val}; {arg} = {flat}; }}")
        else:
            k.emit(f"{acc} += ({ct}){val};")
        for cm in reversed(loops):
            cm.__exit__(None, None, None)
        if is_max:
            return arg if want_index else acc
        count = " * ".join(f"({h} - {lo})" for lo, h in zip(los, his, strict=True))
        return k.let(f"{acc} / ({ct})({count})", ct)

    vals = b.add(Pointwise(shape, dtype, [x], fn=lambda k, idx: body(k, idx), cost=8))
    if isinstance(meta, (list, tuple)):
        ids = b.add(Pointwise(shape, torch.int64, [x], fn=lambda k, idx: body(k, idx, True),
                              cost=8))
        return vals, ids
    return vals
