"""Lowerings of activation functions (sigmoid, SiLU, GELU, ELU, softplus, Mish...)."""

from __future__ import annotations

import math

from torch import fx

from kernelwright.tools.lower.builder import Builder, register
from kernelwright.tools.lower.dtypes import compute_type, literal
from kernelwright.tools.lower.ops_pointwise import _shape_dtype, clamp_literal


@register("sigmoid")
def _sigmoid(b: Builder, n: fx.Node):
    (x,), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    ct = compute_type(dtype)
    return b.pointwise(shape, dtype, [x], lambda k, v: (
        f"(({ct})1 / (({ct})1 + {k.call('exp', ct, f'-{v[0]}')}))"), cost=4)


@register("silu")
def _silu(b: Builder, n: fx.Node):
    (x,), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    ct = compute_type(dtype)
    return b.pointwise(shape, dtype, [x], lambda k, v: (
        f"({v[0]} / (({ct})1 + {k.call('exp', ct, f'-{v[0]}')}))"), cost=4)


@register("gelu")
def _gelu(b: Builder, n: fx.Node):
    (x, *rest), kw = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    ct = compute_type(dtype)
    approx = kw.get("approximate", rest[0] if rest else "none")
    L = lambda v: literal(v, dtype)  # noqa: E731
    if approx == "tanh":
        def fn(k, v):
            cube = f"{v[0]} * {v[0]} * {v[0]}"
            inner = f"{L(math.sqrt(2 / math.pi))} * ({v[0]} + {L(0.044715)} * {cube})"
            return f"({L(0.5)} * {v[0]} * ({L(1)} + {k.call('tanh', ct, inner)}))"
    else:
        def fn(k, v):
            return (f"({L(0.5)} * {v[0]} * ({L(1)} + "
                    f"{k.call('erf', ct, f'{v[0]} * {L(1 / math.sqrt(2))}')}))")
    return b.pointwise(shape, dtype, [x], fn, cost=6)


@register("elu")
def _elu(b: Builder, n: fx.Node):
    (x, *rest), kw = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    ct = compute_type(dtype)
    alpha, scale, iscale = (list(rest) + [1.0, 1.0, 1.0])[:3]
    alpha, scale, iscale = kw.get("alpha", alpha), kw.get("scale", scale), kw.get(
        "input_scale", iscale)
    L = lambda v: literal(v, dtype)  # noqa: E731
    return b.pointwise(shape, dtype, [x], lambda k, v: (
        f"({v[0]} > {L(0)} ? {L(scale)} * {v[0]} : {L(scale * alpha)} * "
        f"{k.call('expm1', ct, f'{v[0]} * {L(iscale)}')})"), cost=4)


@register("leaky_relu")
def _leaky(b: Builder, n: fx.Node):
    (x, *rest), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    slope = literal(rest[0] if rest else 0.01, dtype)
    return b.pointwise(shape, dtype, [x], lambda k, v: f"({v[0]} > 0 ? {v[0]} : {v[0]} * {slope})")


@register("hardtanh")
def _hardtanh(b: Builder, n: fx.Node):
    (x, *rest), _ = b.args(n)
    lo, hi = (list(rest) + [-1.0, 1.0])[:2] if rest else (-1.0, 1.0)
    shape, dtype = _shape_dtype(b, n)
    return b.pointwise(shape, dtype, [x], lambda k, v: (
        clamp_literal(v[0], lo, hi, dtype)))


@register("hardsigmoid")
def _hardsigmoid(b: Builder, n: fx.Node):
    (x,), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    L = lambda v: literal(v, dtype)  # noqa: E731
    return b.pointwise(shape, dtype, [x], lambda k, v: (
        clamp_literal(f"{v[0]} / {L(6)} + {L(0.5)}", 0, 1, dtype)))


@register("hardswish")
def _hardswish(b: Builder, n: fx.Node):
    (x,), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    L = lambda v: literal(v, dtype)  # noqa: E731
    return b.pointwise(shape, dtype, [x], lambda k, v: (
        f"({v[0]} * {clamp_literal(f'{v[0]} + {L(3)}', 0, 6, dtype)} / {L(6)})"))


@register("softplus")
def _softplus(b: Builder, n: fx.Node):
    (x, *rest), _ = b.args(n)
    beta, thr = (list(rest) + [1.0, 20.0])[:2]
    shape, dtype = _shape_dtype(b, n)
    ct = compute_type(dtype)
    L = lambda v: literal(v, dtype)  # noqa: E731
    return b.pointwise(shape, dtype, [x], lambda k, v: (
        f"({v[0]} * {L(beta)} > {L(thr)} ? {v[0]} : "
        f"{k.call('log1p', ct, k.call('exp', ct, f'{v[0]} * {L(beta)}'))}"
        f" / {L(beta)})"), cost=6)


@register("mish")
def _mish(b: Builder, n: fx.Node):
    (x,), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    ct = compute_type(dtype)
    L = lambda v: literal(v, dtype)  # noqa: E731
    def fn(k, v):
        soft = k.call("log1p", ct, k.call("exp", ct, v[0]))
        return f"({v[0]} * {k.call('tanh', ct, f'({v[0]} > {L(20)} ? {v[0]} : {soft})')})"

    return b.pointwise(shape, dtype, [x], fn, cost=8)


@register("threshold")
def _threshold(b: Builder, n: fx.Node):
    (x, thr, val), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    return b.pointwise(shape, dtype, [x], lambda k, v: (
        f"({v[0]} > {literal(thr, dtype)} ? {v[0]} : {literal(val, dtype)})"))
