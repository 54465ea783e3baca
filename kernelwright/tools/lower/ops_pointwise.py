"""Lowerings of elementwise operators: arithmetic, math, comparisons, casts, constructors
(activations are in ``ops_activation``)."""

from __future__ import annotations

import torch
from torch import fx

from kernelwright.tools.lower.builder import Builder, overload, register
from kernelwright.tools.lower.dtypes import compute_type, literal

_BINARY = {
    "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})",
    "maximum": "kw_maxn({0}, {1})", "minimum": "kw_minn({0}, {1})",
    "fmax": "kw_fmax({0}, {1})", "fmin": "kw_fmin({0}, {1})",
    "bitwise_and": "({0} & {1})", "bitwise_or": "({0} | {1})", "bitwise_xor": "({0} ^ {1})",
}
_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_LOGICAL = {"logical_and": "({0} && {1})", "logical_or": "({0} || {1})",
            "logical_xor": "(({0}) != ({1}))"}
_MATH1 = ["exp", "log", "sqrt", "rsqrt", "tanh", "erf", "sin", "cos", "tan", "floor", "ceil",
          "trunc", "log1p", "expm1", "log2", "log10", "exp2", "atan", "asin", "acos", "sinh",
          "cosh", "asinh", "acosh", "atanh", "erfc", "lgamma", "cbrt"]


def _shape_dtype(b: Builder, n: fx.Node):
    return b.out_spec(n)


def _promoted(b: Builder, n: fx.Node, a, c) -> torch.dtype:
    """torch's type promotion of the two operands of ``n``."""
    va = b.meta(n.args[0]) if isinstance(n.args[0], fx.Node) else n.args[0]
    vc = b.meta(n.args[1]) if isinstance(n.args[1], fx.Node) else n.args[1]
    return torch.result_type(va, vc)


def _binary(b: Builder, n: fx.Node):
    (x, y, *rest), kw = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    name = n.target.overloadpacket.__name__
    alpha = kw.get("alpha", rest[0] if rest else 1)
    if name in ("add", "sub") and alpha != 1:
        sign = "+" if name == "add" else "-"
        tmpl = "({0} " + sign + " " + literal(alpha, dtype) + " * {1})"
    else:
        tmpl = _BINARY[name]
    return b.pointwise(shape, dtype, [x, y], lambda k, v: tmpl.format(*v))


for _name in _BINARY:
    register(_name)(_binary)


@register("rsub")
def _rsub(b: Builder, n: fx.Node):
    (x, y, *rest), kw = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    alpha = kw.get("alpha", rest[0] if rest else 1)
    return b.pointwise(shape, dtype, [x, y],
                       lambda k, v: f"({v[1]} - {literal(alpha, dtype)} * {v[0]})")


@register("div")
def _div(b: Builder, n: fx.Node):
    (x, y, *rest), kw = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    mode = kw.get("rounding_mode", rest[0] if rest else None)
    ct = compute_type(dtype)
    if mode is None:
        return b.pointwise(shape, dtype, [x, y], lambda k, v: f"({v[0]} / {v[1]})")
    if mode == "trunc":
        if dtype.is_floating_point:
            return b.pointwise(shape, dtype, [x, y],
                               lambda k, v: k.call("trunc", ct, f"{v[0]} / {v[1]}"))
        return b.pointwise(shape, dtype, [x, y], lambda k, v: f"({v[0]} / {v[1]})")
    if dtype.is_floating_point:
        return b.pointwise(shape, dtype, [x, y],
                           lambda k, v: k.call("floor", ct, f"{v[0]} / {v[1]}"))
    return b.pointwise(shape, dtype, [x, y], lambda k, v: f"kw_floordiv({v[0]}, {v[1]})")


@register("floor_divide")
def _floor_divide(b: Builder, n: fx.Node):
    (x, y), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    ct = compute_type(dtype)
    if dtype.is_floating_point:
        return b.pointwise(shape, dtype, [x, y],
                           lambda k, v: k.call("floor", ct, f"{v[0]} / {v[1]}"))
    return b.pointwise(shape, dtype, [x, y], lambda k, v: f"kw_floordiv({v[0]}, {v[1]})")


@register("remainder", "fmod")
def _remainder(b: Builder, n: fx.Node):
    (x, y), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    ct = compute_type(dtype)
    py = n.target.overloadpacket.__name__ == "remainder"
    if not dtype.is_floating_point:
        op = "kw_imod({0}, {1})" if py else "({0} % {1})"
        return b.pointwise(shape, dtype, [x, y], lambda k, v: op.format(*v))
    if py:
        return b.pointwise(shape, dtype, [x, y], lambda k, v: (
            f"({v[0]} - {v[1]} * {k.call('floor', ct, f'{v[0]} / {v[1]}')})"), cost=3)
    return b.pointwise(shape, dtype, [x, y], lambda k, v: k.call("fmod", ct, *v))


@register("pow")
def _pow(b: Builder, n: fx.Node):
    (x, y), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    ct = compute_type(dtype)
    if isinstance(y, (int, float)) and not isinstance(x, (int, float)):
        if y == 2:
            return b.pointwise(shape, dtype, [x], lambda k, v: f"({v[0]} * {v[0]})")
        if y == 3:
            return b.pointwise(shape, dtype, [x], lambda k, v: f"({v[0]} * {v[0]} * {v[0]})")
        if y == 0.5:
            return b.pointwise(shape, dtype, [x], lambda k, v: k.call("sqrt", ct, v[0]))
        if y == 1:
            return b.pointwise(shape, dtype, [x], lambda k, v: v[0])
        if y == -1:
            return b.pointwise(shape, dtype, [x], lambda k, v: f"(({ct})1 / {v[0]})")
    if not dtype.is_floating_point:
        return b.pointwise(shape, dtype, [x, y], lambda k, v: (
            f"(({ct}){k.call('pow', 'double', f'(double){v[0]}', f'(double){v[1]}')})"),
            cost=4)
    return b.pointwise(shape, dtype, [x, y], lambda k, v: k.call("pow", ct, *v), cost=4)


@register("atan2")
def _atan2(b: Builder, n: fx.Node):
    (x, y), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    return b.pointwise(shape, dtype, [x, y],
                       lambda k, v: k.call("atan2", compute_type(dtype), *v), cost=4)


@register(*_COMPARE)
def _compare(b: Builder, n: fx.Node):
    (x, y), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    op = _COMPARE[n.target.overloadpacket.__name__]
    return b.pointwise(shape, dtype, [x, y], lambda k, v: f"({v[0]} {op} {v[1]})",
                       opd_dtype=_promoted(b, n, x, y))


@register(*_LOGICAL)
def _logical(b: Builder, n: fx.Node):
    (x, y), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    tmpl = _LOGICAL[n.target.overloadpacket.__name__]
    return b.pointwise(shape, dtype, [x, y], lambda k, v: tmpl.format(*v),
                       opd_dtype=torch.bool)


def _unary_math(b: Builder, n: fx.Node):
    (x, *_), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    ct = compute_type(dtype)
    fn = n.target.overloadpacket.__name__
    return b.pointwise(shape, dtype, [x], lambda k, v: k.call(fn, ct, v[0]), cost=4)


for _name in _MATH1:
    register(_name)(_unary_math)

_UNARY = {
    "neg": "(-{0})", "reciprocal": "(({ct})1 / {0})", "relu": "({0} < ({ct})0 ? ({ct})0 : {0})",
    "sign": "kw_sign({0})", "logical_not": "(!({0}))", "bitwise_not": "(~{0})",
    "square": "({0} * {0})", "sgn": "kw_sign({0})",
}


@register(*_UNARY)
def _unary(b: Builder, n: fx.Node):
    (x, *_), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    ct = compute_type(dtype)
    name = n.target.overloadpacket.__name__
    if name == "bitwise_not" and dtype == torch.bool:
        return b.pointwise(shape, dtype, [x], lambda k, v: f"(!{v[0]})")
    opd = torch.bool if name == "logical_not" else None
    tmpl = _UNARY[name]
    return b.pointwise(shape, dtype, [x], lambda k, v: tmpl.format(v[0], ct=ct), opd_dtype=opd)


@register("abs")
def _abs(b: Builder, n: fx.Node):
    (x,), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    ct = compute_type(dtype)
    if dtype.is_floating_point:
        return b.pointwise(shape, dtype, [x], lambda k, v: k.call("fabs", ct, v[0]))
    return b.pointwise(shape, dtype, [x], lambda k, v: f"({v[0]} < 0 ? -{v[0]} : {v[0]})")


@register("isnan", "isinf", "isfinite")
def _isnan(b: Builder, n: fx.Node):
    (x,), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    name = n.target.overloadpacket.__name__
    src = b.meta(n.args[0]).dtype
    if not src.is_floating_point:
        val = "false" if name != "isfinite" else "true"
        return b.pointwise(shape, dtype, [x], lambda k, v: val)
    tmpl = {"isnan": "({0} != {0})",
            "isinf": "({0} == KW_INF || {0} == -KW_INF)",
            "isfinite": "({0} == {0} && {0} != KW_INF && {0} != -KW_INF)"}[name]
    return b.pointwise(shape, dtype, [x], lambda k, v: tmpl.format(v[0]), opd_dtype=src)


@register("clamp", "clamp_min", "clamp_max")
def _clamp(b: Builder, n: fx.Node):
    args, kw = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    name = n.target.overloadpacket.__name__
    x = args[0]
    if name == "clamp":
        lo = kw.get("min", args[1] if len(args) > 1 else None)
        hi = kw.get("max", args[2] if len(args) > 2 else None)
    else:
        lo, hi = (args[1], None) if name == "clamp_min" else (None, args[1])
    if all(v is None or isinstance(v, int | float) for v in (lo, hi)):
        return b.pointwise(shape, dtype, [x], lambda k, v: clamp_literal(v[0], lo, hi, dtype))
    ops = [x] + [v for v in (lo, hi) if v is not None]

    def fn(k, v):
        out, i = v[0], 1
        if lo is not None:
            out, i = f"kw_maxn({out}, {v[i]})", i + 1
        if hi is not None:
            out = f"kw_minn({out}, {v[i]})"
        return out

    return b.pointwise(shape, dtype, ops, fn)


def clamp_literal(value: str, lo: float | None, hi: float | None, dtype: torch.dtype) -> str:
    """``value`` clamped to number bounds (None: no bound): ``kw_maxc``/``kw_minc``, one
    max/min instruction each where a bound is not NaN, NaN in ``value`` kept as torch keeps it;
    a NaN bound takes the two-sided NaN test (the result is NaN)."""
    out = value
    for bound, one, nan in ((lo, "kw_maxc", "kw_maxn"), (hi, "kw_minc", "kw_minn")):
        if bound is not None:
            out = f"{one if bound == bound else nan}({out}, {literal(bound, dtype)})"
    return out


@register("where")
def _where(b: Builder, n: fx.Node):
    (c, x, y), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    from kernelwright.tools.lower.builder import broadcast_load

    ct = compute_type(dtype)

    def fn(k, v):
        return f"({v[0]} ? {v[1]} : {v[2]})"

    def body(k, idx):
        cv = broadcast_load(k, c, idx, torch.bool)
        xv = broadcast_load(k, x, idx, dtype)
        yv = broadcast_load(k, y, idx, dtype)
        return k.let(fn(k, [cv, xv, yv]), ct)

    from kernelwright.tools.lower.ir import Node, Pointwise

    deps = [t for t in (c, x, y) if isinstance(t, Node)]
    return b.add(Pointwise(shape, dtype, deps, fn=body))


@register("lerp")
def _lerp(b: Builder, n: fx.Node):
    (x, y, w), _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    return b.pointwise(shape, dtype, [x, y, w],
                       lambda k, v: f"({v[0]} + {v[2]} * ({v[1]} - {v[0]}))")


@register("_to_copy", "clone", "alias", "detach", "lift_fresh_copy", "contiguous",
          "_conj", "positive", "copy")
def _copy(b: Builder, n: fx.Node):
    args, _ = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    src = args[1] if n.target.overloadpacket.__name__ == "copy" else args[0]
    if not hasattr(src, "shape"):
        return b.pointwise(shape, dtype, [src], lambda k, v: v[0])
    if src.dtype == dtype and tuple(src.shape) == shape:
        return src
    return b.pointwise(shape, dtype, [src], lambda k, v: v[0])


@register("full", "full_like", "zeros_like", "ones_like", "scalar_tensor", "zeros", "ones",
          "empty_like", "empty", "new_zeros", "new_ones", "new_full", "new_empty",
          "empty_strided", "empty_permuted")
def _full(b: Builder, n: fx.Node):
    args, kw = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    name = n.target.overloadpacket.__name__
    value = {"zeros_like": 0, "ones_like": 1, "zeros": 0, "ones": 1, "new_zeros": 0,
             "new_ones": 1}.get(name, 0)
    if name in ("full",):
        value = args[1]
    elif name in ("full_like", "new_full"):
        value = args[1]
    elif name == "scalar_tensor":
        value = args[0]
    return b.pointwise(shape, dtype, [], lambda k, v: literal(value, dtype))


@register("arange")
def _arange(b: Builder, n: fx.Node):
    args, kw = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    ov = overload(n.target)
    start, step = 0, 1
    if ov == "start_step" or len(args) >= 2:
        start = args[0]
        step = args[2] if len(args) > 2 else kw.get("step", 1)
    ct = compute_type(dtype)
    from kernelwright.tools.lower.ir import Pointwise

    def body(k, idx):
        return k.let(f"(({ct})({start!r} + ({idx[0].render()}) * {step!r}))", ct)

    return b.add(Pointwise(shape, dtype, [], fn=body))


@register("prims.iota")
def _iota(b: Builder, n: fx.Node):
    args, kw = b.args(n)
    shape, dtype = _shape_dtype(b, n)
    start, step = kw.get("start", 0), kw.get("step", 1)
    ct = compute_type(dtype)
    from kernelwright.tools.lower.ir import Pointwise

    return b.add(Pointwise(shape, dtype, [], fn=lambda k, idx: k.let(
        f"(({ct})({start} + ({idx[0].render()}) * {step}))", ct)))


@register("bernoulli", "native_dropout", "rand", "randn", "rand_like", "randn_like")
def _random(b: Builder, n: fx.Node):
    from kernelwright.errors import LoweringError

    raise LoweringError(
        f"operator {n.target} draws random numbers, which no kernel can match bit for bit: "
        "put the model in eval mode (dropout off), pass the random tensor in as an input, or "
        "remove the random operator"
    )
