"""Running a plan's vendor steps: one library call each, its result bound as the step's buffer.

A step is prepared once per signature (operand views, the op and its arguments resolved) into
``call(tensors) -> tensor``; the runner binds the returned tensor to the step's output slot, so
a library result that is a program output is returned as is (no copy, no second pass). Forms:
``matmul`` (torch.mm / torch.matmul, the BLAS eager uses), ``linear`` (oneDNN inner product
with bias and activation post-ops, ``torch.ops.mkldnn._linear_pointwise``), ``conv`` (oneDNN
convolution, with post-ops through ``torch.ops.mkldnn._convolution_pointwise`` when it has any,
its weight reordered once into oneDNN's layout while the weight tensor stays the same).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

Call = Callable[[list[torch.Tensor]], torch.Tensor]


def _contiguous_strides(shape: list[int]) -> list[int]:
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= s
    return out[::-1]


def _viewer(spec: list[Any] | None, slot: dict[str, int]):
    """``tensors -> view`` for ``[buffer, shape, strides, offset]`` (None -> None)."""
    if spec is None:
        return lambda ts: None
    name, shape, strides, offset = spec
    i, shape, strides = slot[name], tuple(shape), tuple(strides)
    if offset == 0 and list(strides) == _contiguous_strides(list(shape)):
        return lambda ts: ts[i].view(shape)
    if (len(shape) == 2 and offset == 0
            and list(strides) == [1, shape[0]]):  # a transposed contiguous matrix
        flipped = (shape[1], shape[0])
        return lambda ts: ts[i].view(flipped).t()
    return lambda ts: torch.as_strided(ts[i], shape, strides, offset)


def prepare(step: dict[str, Any], slot: dict[str, int]) -> tuple[Call, int]:
    """The step as ``call(tensors)`` and the slot its result binds to."""
    out_name, out_shape = step["out"]
    out_shape = tuple(out_shape)
    kind = step["vendor"]
    if kind == "linear":
        x, w, b = _viewer(step["x"], slot), _viewer(step["w"], slot), _viewer(step["bias"], slot)
        attr, scalars, algo = step["attr"], list(step["scalars"]), step["algorithm"]
        op = torch.ops.mkldnn._linear_pointwise
        weight = _Prepacked(0, (), (), (), 1)  # a [K, N] weight: made [N, K] once, not per call

        def call(ts):
            return op(x(ts).contiguous(), weight(w(ts)), b(ts), attr, scalars, algo)
    elif kind == "conv":
        call = _conv_call(step, slot)
    else:
        a, b = _viewer(step["a"], slot), _viewer(step["b"], slot)
        mm = torch.mm if len(step["a"][1]) == 2 and len(step["b"][1]) == 2 else torch.matmul

        def call(ts):
            return mm(a(ts), b(ts))

    def bound(ts):
        y = call(ts)
        if not y.is_contiguous():
            y = y.contiguous()
        return y.view(out_shape)

    return bound, slot[out_name]


def _conv_call(step: dict[str, Any], slot: dict[str, int]) -> Call:
    from torch.nn import functional as F

    x, w, b = _viewer(step["x"], slot), _viewer(step["w"], slot), _viewer(step["bias"], slot)
    nd = len(step["x"][1]) - 2
    stride, padding, dilation = step["stride"], step["padding"], step["dilation"]
    groups = step["groups"]
    attr = step.get("attr", "none")
    if attr != "none" and not step["transposed"]:
        op = torch.ops.mkldnn._convolution_pointwise
        scalars, algo = list(step.get("scalars", ())), step.get("algorithm", "")
        packed = _Prepacked(nd, padding, stride, dilation, groups)
        return lambda ts: op(x(ts).contiguous(), packed(w(ts)), b(ts), padding, stride,
                             dilation, groups, attr, scalars, algo)
    if step["transposed"]:
        fn = getattr(F, f"conv_transpose{nd}d")
        extra = step["output_padding"]
        return lambda ts: fn(x(ts), w(ts), b(ts), stride, padding, extra, groups, dilation)
    fn = getattr(F, f"conv{nd}d")
    return lambda ts: fn(x(ts), w(ts), b(ts), stride, padding, dilation, groups)


class _Prepacked:
    """A weight made contiguous (and for a 2-D/3-D convolution reordered into oneDNN's blocked
    layout) once, again only when the weight tensor changes (another tensor or strides, or
    written in place: its version)."""

    def __init__(self, nd: int, padding, stride, dilation, groups: int) -> None:
        self.reorder = {2: getattr(torch._C._nn, "mkldnn_reorder_conv2d_weight", None),
                        3: getattr(torch._C._nn, "mkldnn_reorder_conv3d_weight", None)}.get(nd)
        self.args = (list(padding), list(stride), list(dilation), groups)
        self.key: tuple[int, int] | None = None
        self.value: torch.Tensor | None = None

    def __call__(self, w: torch.Tensor) -> torch.Tensor:
        if self.reorder is None and w.is_contiguous():
            return w
        key = (w.data_ptr(), w._version, tuple(w.stride()))
        if key != self.key:
            self.value = w.contiguous()
            if self.reorder is not None:
                try:
                    self.value = self.reorder(self.value.to_mkldnn(), *self.args)
                except RuntimeError:  # this torch build cannot: the plain weight works too
                    self.reorder = None
            self.key = key
        assert self.value is not None
        return self.value


def run_vendor(step: dict[str, Any], t: dict[str, torch.Tensor]) -> None:
    """Execute one vendor step on the named buffers ``t``, binding its result in ``t``."""
    names = list(t)
    call, out = prepare(step, {n: i for i, n in enumerate(names)})
    t[names[out]] = call(list(t.values()))
