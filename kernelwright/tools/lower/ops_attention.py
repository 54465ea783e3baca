"""Scaled dot-product attention lowered as one anchor (``ir.Attention``).

torch's core-ATen table decomposes ``scaled_dot_product_attention`` into two batched GEMMs,
a softmax and a fix-up for fully masked rows: six kernels and four intermediates in memory
where eager runs one fused kernel. Capture instead routes the form lowered here (no mask, no
dropout, no grouped-query heads, float32/float64, operands of equal rank) to the opaque
operator ``kwlower::attention``, which the decompositions leave alone; any other form still
takes torch's decomposition. Hand-written attention (two products around a softmax, as
minGPT writes it) is folded into the same operator after decomposition (``fold_attention``).
The operator exists only while capturing: the candidate never calls it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import fx
from torch.nn import functional as F

from kernelwright.tools.lower.builder import Builder, register
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.ir import Attention, Node


@torch.library.custom_op("kwlower::attention", mutates_args=())
def attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                 scale: float) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)


@attention_op.register_fake
def _attention_shape(q, k, v, causal, scale):
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    return q.new_empty((*batch, q.shape[-2], v.shape[-1]))


_ARGS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal")
_DEFAULTS = {"attn_mask": None, "dropout_p": 0.0, "is_causal": False, "scale": None,
             "enable_gqa": False}


def routed_decomposition(fallback: Callable[..., Any]) -> Callable[..., Any]:
    """``scaled_dot_product_attention``'s decomposition: the lowered form becomes
    ``kwlower::attention``, anything else ``fallback`` (torch's own)."""

    def decompose(*args: Any, **kwargs: Any) -> Any:
        a = {**_DEFAULTS, **dict(zip(_ARGS, args, strict=False)), **kwargs}
        q, k, v = a["query"], a["key"], a["value"]
        if (a["attn_mask"] is None and not a["dropout_p"] and not a["enable_gqa"]
                and q.dtype in (torch.float32, torch.float64) and q.dtype == k.dtype == v.dtype
                and q.dim() == k.dim() == v.dim() >= 2 and q.shape[-1] == k.shape[-1]
                and k.shape[-2] == v.shape[-2] and q.shape[-2] > 0 and k.shape[-2] > 0):
            try:
                torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
            except RuntimeError:
                return fallback(*args, **kwargs)
            scale = a["scale"] if a["scale"] is not None else 1.0 / math.sqrt(q.shape[-1])
            return attention_op(q, k, v, bool(a["is_causal"]), float(scale))
        return fallback(*args, **kwargs)

    return decompose


_RESHAPES = ("view", "_unsafe_view", "reshape", "expand")
_SOFTMAX = ("softmax", "_softmax")  # not _safe_softmax: 0, not NaN, on rows of -inf


def fold_attention(gm: fx.GraphModule) -> int:
    """Rewrite hand-written attention, ``bmm(softmax(scale * bmm(q, kT), -1), v)`` (``mm``
    without batch), as ``kwlower::attention`` in the captured core-ATen graph. Between the
    products only reshapes that keep the rows (same element count, same last dim), one
    multiply or divide by a number and a softmax over the last dim may stand, each read only
    by the next. Returns how many were folded."""
    folded = 0
    for node in list(gm.graph.nodes):
        match = _attention_at(node)
        if match is None:
            continue
        q, kt, v, scale = match
        with gm.graph.inserting_before(node):
            dims = [1, 0] if len(_val(kt).shape) == 2 else [0, 2, 1]
            k = gm.graph.call_function(torch.ops.aten.permute.default, (kt, dims))
            with _val(kt).fake_mode:
                k.meta["val"] = _val(kt).permute(*dims)
            att = gm.graph.call_function(torch.ops.kwlower.attention.default,
                                         (q, k, v, False, scale))
            att.meta["val"] = _val(node)
        node.replace_all_uses_with(att)
        folded += 1
    if folded:
        gm.graph.eliminate_dead_code()
        gm.recompile()
    return folded


def _val(n: Any) -> Any:
    return n.meta.get("val") if isinstance(n, fx.Node) else None


def _target(n: Any) -> str:
    if not isinstance(n, fx.Node) or n.op != "call_function":
        return ""
    packet = getattr(n.target, "overloadpacket", None)
    return getattr(packet, "__name__", "")


def _through_reshapes(n: fx.Node) -> fx.Node:
    """The first node above ``n`` that is not a row-keeping reshape read only by the next."""
    while _target(n) in _RESHAPES and len(n.users) == 1:
        src = n.args[0]
        a, b = _val(src), _val(n)
        if (a is None or b is None or a.numel() != b.numel() or not a.shape or not b.shape
                or a.shape[-1] != b.shape[-1]):
            break
        n = src
    return n


def _attention_at(node: fx.Node) -> tuple[Any, Any, Any, float] | None:
    """``(q, kT, v, scale)`` when ``node`` is the second product of an attention."""
    if _target(node) not in ("bmm", "mm"):
        return None
    out = _val(node)
    if out is None or out.dtype not in (torch.float32, torch.float64):
        return None
    probs, v = node.args[0], node.args[1]
    soft = _through_reshapes(probs) if isinstance(probs, fx.Node) else None
    if soft is None or _target(soft) not in _SOFTMAX or len(soft.users) != 1:
        return None
    if soft.args[1] not in (-1, len(_val(soft).shape) - 1) or any(soft.args[2:]):
        return None
    scores, scale = soft.args[0], 1.0
    if _target(scores) in ("mul", "div") and len(scores.users) == 1 and isinstance(
            scores.args[1], (int, float)) and scores.args[1]:
        scale = float(scores.args[1]) if _target(scores) == "mul" else 1.0 / scores.args[1]
        scores = scores.args[0]
    first = _through_reshapes(scores) if isinstance(scores, fx.Node) else None
    if first is None or _target(first) != _target(node) or len(first.users) != 1:
        return None
    return first.args[0], first.args[1], v, scale


def _operand(x: Node, batch: tuple[int, ...]) -> Callable[[Any, list[Ix]], str]:
    """``x``'s element at an index of the output's batch dims plus its two matrix dims
    (leading batch dims ``x`` lacks are dropped, dims of size 1 broadcast)."""
    lead = len(batch) - (len(x.shape) - 2)

    def load(k: Any, idx: list[Ix]) -> str:
        bidx = [Ix.c(0) if s == 1 else i
                for i, s in zip(idx[lead:len(batch)], x.shape[:-2], strict=True)]
        return x.load(k, bidx + idx[-2:])

    return load


@register("kwlower.attention")
def _attention(b: Builder, n: fx.Node) -> Node:
    (q, k, v, causal, scale), _ = b.args(n)
    shape, dtype = b.out_spec(n)
    batch = tuple(shape[:-2])
    node = Attention(tuple(shape), dtype, [q, k, v], batch=batch, lq=q.shape[-2],
                     skv=k.shape[-2], d=q.shape[-1], dv=v.shape[-1], scale=float(scale),
                     causal=bool(causal), qload=_operand(q, batch), kload=_operand(k, batch),
                     vload=_operand(v, batch), cost=k.shape[-2] * (q.shape[-1] + v.shape[-1]))
    return b.add(node)
