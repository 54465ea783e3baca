"""Hand-written attention folded into ``kwlower::attention`` in a captured core-ATen graph.

``bmm(softmax(scale * bmm(q, kT), -1), v)`` (``mm`` without batch), as minGPT and most
hand-written attention writes it, becomes the one operator ``ops_attention`` lowers as an
``ir.Attention`` anchor. Between the two products only reshapes that keep the rows (same
element count, same last dim), one multiply or divide by a number, a causal mask and a
softmax over the last dim may stand, each read only by the next. A causal mask is a
``masked_fill(mask, -inf)`` (``where(mask, -inf, scores)``) whose mask depends on constants
and buffers only and, evaluated on their values, is exactly ``j > i``; any other mask keeps
the two products.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import fx

from kernelwright.tools.lower import ops_attention  # noqa: F401  (registers the operator)

_RESHAPES = ("view", "_unsafe_view", "reshape", "expand", "clone", "alias")  # value-keeping
_SOFTMAX = ("softmax", "_softmax")  # not _safe_softmax: 0, not NaN, on rows of -inf


def fold_attention(gm: fx.GraphModule, constants: dict[str, torch.Tensor] | None = None
                   ) -> int:
    """Fold every hand-written attention of ``gm``; ``constants`` are the values of its
    buffer and constant placeholders, by placeholder name (a causal mask is read from them).
    Returns how many were folded."""
    folded = 0
    for node in list(gm.graph.nodes):
        match = _attention_at(node, constants or {})
        if match is None:
            continue
        q, kt, v, scale, causal = match
        with gm.graph.inserting_before(node):
            dims = [1, 0] if len(_val(kt).shape) == 2 else [0, 2, 1]
            k = gm.graph.call_function(torch.ops.aten.permute.default, (kt, dims))
            with _val(kt).fake_mode:
                k.meta["val"] = _val(kt).permute(*dims)
            att = gm.graph.call_function(torch.ops.kwlower.attention.default,
                                         (q, k, v, causal, scale))
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


def _attention_at(node: fx.Node, constants: dict[str, torch.Tensor]
                  ) -> tuple[Any, Any, Any, float, bool] | None:
    """``(q, kT, v, scale, causal)`` when ``node`` is the second product of an attention."""
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
    scores, scale, causal = soft.args[0], 1.0, False
    if _target(scores) == "where" and len(scores.users) == 1:
        kept = _causal_kept(scores, constants)
        if kept is None:
            return None
        scores, causal = kept, True
    if _target(scores) in ("mul", "div") and len(scores.users) == 1 and isinstance(
            scores.args[1], (int, float)) and scores.args[1]:
        scale = float(scores.args[1]) if _target(scores) == "mul" else 1.0 / scores.args[1]
        scores = scores.args[0]
    first = _through_reshapes(scores) if isinstance(scores, fx.Node) else None
    if first is None or _target(first) != _target(node) or len(first.users) != 1:
        return None
    return first.args[0], first.args[1], v, scale, causal


def _causal_kept(where: fx.Node, constants: dict[str, torch.Tensor]) -> Any:
    """The scores a causal ``where(mask, -inf, scores)`` keeps, or None when it is not one."""
    cond, fill, scores = where.args
    value = _constant(fill, constants, 8)
    if value is None or value.numel() != 1 or float(value) != -math.inf:
        return None
    mask, shape = _constant(cond, constants, 16), _val(where).shape
    if mask is None or mask.dtype != torch.bool or len(shape) < 2:
        return None
    rows, cols = shape[-2], shape[-1]
    above = torch.ones(rows, cols, dtype=torch.bool).triu(1)
    try:
        return scores if bool((mask.expand(shape) == above).all()) else None
    except RuntimeError:  # a mask that does not broadcast to the scores
        return None


def _constant(n: Any, constants: dict[str, torch.Tensor], depth: int) -> Any:
    """``n``'s value when it depends on numbers, constants and buffers only (evaluated),
    else None."""
    if not isinstance(n, fx.Node):
        return torch.tensor(n) if isinstance(n, (int, float, bool)) else None
    if n.op == "placeholder":
        return constants.get(n.name)
    if n.op != "call_function" or depth <= 0:
        return None
    args = []
    for a in n.args:
        if isinstance(a, fx.Node):
            a = _constant(a, constants, depth - 1)
            if a is None:
                return None
        args.append(a)
    try:
        with torch.no_grad():
            out = n.target(*args, **n.kwargs)
    except Exception:  # an operator that needs what a constant cannot give
        return None
    return out if isinstance(out, torch.Tensor) else None


