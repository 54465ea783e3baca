"""Scaled dot-product attention lowered as one anchor (``ir.Attention``).

torch's core-ATen table decomposes ``scaled_dot_product_attention`` into two batched GEMMs,
a softmax and a fix-up for fully masked rows: six kernels and four intermediates in memory
where eager runs one fused kernel. Capture instead routes the form lowered here (no mask, no
dropout, no grouped-query heads, float32/float64, operands of equal rank) to the opaque
operator ``kwlower::attention``, which the decompositions leave alone; any other form still
takes torch's decomposition. Hand-written attention (two products around a softmax, as
minGPT writes it) is folded into the same operator after decomposition (``attention_fold``).
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
