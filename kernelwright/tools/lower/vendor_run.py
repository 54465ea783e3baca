"""Running a plan's vendor steps: one library call each, its result bound as the step's buffer.

A step is prepared once per signature (operand views, the op and its arguments resolved) into
``call(tensors) -> tensor``; the runner binds the returned tensor to the step's output slot, so
a library result that is a program output is returned as is (no copy, no second pass). Forms:
``matmul`` (torch.mm / torch.matmul, the BLAS eager uses), ``linear`` (oneDNN inner product
with bias and activation post-ops, ``torch.ops.mkldnn._linear_pointwise``), ``conv`` (oneDNN
convolution, with post-ops through ``torch.ops.mkldnn._convolution_pointwise`` when it has any,
its weight reordered once into oneDNN's layout while the weight tensor stays the same),
``attention`` (torch's fused CPU attention kernel, what eager runs for it). A
convolution step marked ``channels_last`` runs on channels-last copies of its input and weight
and its result stays channels-last: the kernels reading it index it so (``VendorStep.layout``),
and returned as an output it is a channels-last tensor, as torch's own channels-last path
returns.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

Call = Callable[[list[torch.Tensor]], torch.Tensor]
_CHANNELS_LAST = {4: torch.channels_last, 5: torch.channels_last_3d}


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
        # the buffer's first elements (layer 0 of an RNN's (layers, batch, hidden) state)
        count = math.prod(shape)

        def first(ts):
            t = ts[i]
            return t.view(shape) if t.numel() == count else t.view(-1)[:count].view(shape)
        return first
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
    elif kind == "attention":
        # the fused kernel itself: under a dispatch mode the composite takes the math path
        flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
        q, k, v = (_viewer(step[n], slot) for n in "qkv")
        causal, scale = bool(step["causal"]), float(step["scale"])

        def call(ts):
            return flash(q(ts), k(ts), v(ts), 0.0, causal, scale=scale)[0]
    else:
        a, b = _viewer(step["a"], slot), _viewer(step["b"], slot)
        mm = torch.mm if len(step["a"][1]) == 2 and len(step["b"][1]) == 2 else torch.matmul

        def call(ts):
            return mm(a(ts), b(ts))

    if step.get("channels_last"):
        layout = _CHANNELS_LAST[len(out_shape)]

        def bound(ts):
            y = call(ts)
            return y if y.is_contiguous(memory_format=layout) else y.contiguous(
                memory_format=layout)
        return bound, slot[out_name]

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
    # channels-last (oneDNN's fast layout for few channels): the input copied per call, the
    # weight once; otherwise the input as it is and, for post-ops, oneDNN's blocked weight
    layout = _CHANNELS_LAST[nd + 2] if step.get("channels_last") else None
    fmt = layout or torch.contiguous_format
    packed = _Prepacked(nd, padding, stride, dilation, groups, layout)
    if attr != "none" and not step["transposed"]:
        op = torch.ops.mkldnn._convolution_pointwise
        scalars, algo = list(step.get("scalars", ())), step.get("algorithm", "")
        return lambda ts: op(x(ts).contiguous(memory_format=fmt), packed(w(ts)), b(ts),
                             padding, stride, dilation, groups, attr, scalars, algo)
    if layout is not None:
        inp, weight = (lambda ts: x(ts).contiguous(memory_format=fmt)), packed
    else:
        inp, weight = x, (lambda t: t)
    if step["transposed"]:
        fn = getattr(F, f"conv_transpose{nd}d")
        extra = step["output_padding"]
        return lambda ts: fn(inp(ts), weight(w(ts)), b(ts), stride, padding, extra, groups,
                             dilation)
    fn = getattr(F, f"conv{nd}d")
    return lambda ts: fn(inp(ts), weight(w(ts)), b(ts), stride, padding, dilation, groups)


class _Prepacked:
    """A weight made contiguous (channels-last when asked, else for a 2-D/3-D convolution
    reordered into oneDNN's blocked layout) once, again only when the weight tensor changes
    (another tensor or strides, or written in place: its version)."""

    def __init__(self, nd: int, padding, stride, dilation, groups: int,
                 layout: torch.memory_format | None = None) -> None:
        self.reorder = {2: getattr(torch._C._nn, "mkldnn_reorder_conv2d_weight", None),
                        3: getattr(torch._C._nn, "mkldnn_reorder_conv3d_weight", None)}.get(nd)
        self.layout = layout  # a channels-last weight instead of oneDNN's blocked one
        if layout is not None:
            self.reorder = None
        self.args = (list(padding), list(stride), list(dilation), groups)
        self.key: tuple[int, int] | None = None
        self.value: torch.Tensor | None = None

    def __call__(self, w: torch.Tensor) -> torch.Tensor:
        layout = self.layout or torch.contiguous_format
        if self.reorder is None and w.is_contiguous(memory_format=layout):
            return w
        key = (w.data_ptr(), w._version, tuple(w.stride()))
        if key != self.key:
            self.value = w.contiguous(memory_format=layout)
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
