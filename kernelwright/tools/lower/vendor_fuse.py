"""Which epilogue a vendor anchor can absorb: a bias and one activation as oneDNN post-ops.

Read from the captured FX graph (``LoweredGraph.values``): from the anchor (``mm``, ``addmm``
or a non-transposed ``convolution``) follow single-user operators: an ``add`` of a 1-D bias
(GEMM), then one activation oneDNN fuses (``relu``, ``gelu``, ``silu``, ``sigmoid``, ``tanh``,
``hardswish``, ``hardsigmoid``, ``leaky_relu``, ``hardtanh``/``clamp``, ``relu`` then
``clamp(max)`` as relu6). The chain's last value is what the fused library call writes; any
epilogue after it stays our kernel, reading that value from a buffer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from kernelwright.tools.lower.builder import op_name
from kernelwright.tools.lower.ir import Conv, Gemm, Input, Node

_PLAIN = {"relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh", "hardswish": "hardswish",
          "hardsigmoid": "hardsigmoid", "silu": "swish"}


@dataclass
class FusedEpilogue:
    """What the library call computes beyond the anchor: ``act(anchor + bias)``."""

    end: Node  # the IR value the call produces (the anchor itself when nothing is fused)
    bias: Node | None = None  # a 1-D bias Input (GEMM: added along N; conv: per channel)
    attr: str = "none"
    scalars: tuple[float, ...] = ()
    algorithm: str = ""
    members: frozenset[int] = frozenset()  # IR node ids the call computes (end included)

    @property
    def text(self) -> str:
        parts = (["bias"] if self.bias is not None else []) + (
            [self.attr if not self.algorithm else f"{self.attr}({self.algorithm})"]
            if self.attr != "none" else [])
        return " + ".join(parts) or "nothing"


def fused_epilogue(graph: Any, anchor: Node) -> FusedEpilogue | None:
    """The post-ops of ``anchor`` (a Gemm or Conv of ``graph``), or None when the anchor is not
    a float32 ``mm``/``addmm``/``convolution`` whose operands the library takes directly."""
    if anchor.dtype != torch.float32:
        return None
    fx_anchor = _fx_of(graph, anchor)
    if fx_anchor is None:
        return None
    name = op_name(fx_anchor.target)
    values = graph.values
    bias = None
    if isinstance(anchor, Gemm) and name == "mm" and not anchor.batch:
        pass
    elif isinstance(anchor, Gemm) and name == "addmm" and not fx_anchor.kwargs:
        bias = _bias_input(values.get(fx_anchor.args[0]), anchor.n)
        if bias is None:
            return None
    elif isinstance(anchor, Conv) and name == "convolution" and not anchor.transposed:
        bias = anchor.bias
        if bias is not None and not isinstance(bias, Input):
            return None
    else:
        return None
    members = {anchor.id, values[fx_anchor].id}
    cur, attr, scalars, algo = fx_anchor, "none", (), ""
    nxt = _only_user(cur)
    if nxt is not None and isinstance(anchor, Gemm) and bias is None and _is_bias_add(
            nxt, cur, values, anchor.n):
        bias = values[_other(nxt, cur)]
        cur, nxt = nxt, _only_user(nxt)
        members.add(values[cur].id)
    if nxt is not None:
        act = _activation(nxt, cur)
        if act is not None:
            attr, scalars, algo = act
            cur = nxt
            members.add(values[cur].id)
            after = _only_user(cur)
            if attr == "relu" and after is not None and _clamp_max(after, cur) is not None:
                attr, scalars = "hardtanh", (0.0, _clamp_max(after, cur))
                cur = after
                members.add(values[cur].id)
    end = values[cur]
    if not isinstance(end, Node) or tuple(end.shape) != tuple(anchor.shape):
        return None
    return FusedEpilogue(end, bias, attr, scalars, algo, frozenset(members))


def post_ops(g: Any, sched: Any, grp: Any) -> FusedEpilogue | None:
    """The bias/activation chain the library call of ``grp`` can absorb, when nothing else
    reads its intermediate values and no other group computes them."""
    fused = fused_epilogue(g, grp.main[0])
    if fused is None or (fused.attr == "none" and (fused.bias is None or grp.kind == "conv")):
        return None
    inner = fused.members - {fused.end.id}
    if {n.id for n in g.outputs} & inner:
        return None
    if any(d.id in inner for n in g.nodes if n.id not in fused.members for d in n.deps):
        return None
    others = {n.id for o in sched.groups if o.main[0] is not grp.main[0]
              for n in o.main + o.epilogue + o.outer}
    return None if others & fused.members else fused


def _fx_of(graph: Any, anchor: Node):
    for fx_node, value in graph.values.items():
        if getattr(fx_node, "op", None) != "call_function":
            continue
        if value is anchor or (isinstance(value, Node) and anchor in value.deps
                               and op_name(fx_node.target) == "addmm"):
            return fx_node
    return None


def _only_user(fx_node):
    users = list(fx_node.users)
    if len(users) != 1 or users[0].op != "call_function":
        return None
    return users[0]


def _other(fx_node, cur):
    a, b = fx_node.args[:2]
    return b if a is cur else a


def _bias_input(value, n: int) -> Node | None:
    if isinstance(value, Input) and tuple(value.shape) == (n,) and value.dtype == torch.float32:
        return value
    return None


def _is_bias_add(fx_node, cur, values, n: int) -> bool:
    if op_name(fx_node.target) != "add" or fx_node.kwargs or len(fx_node.args) != 2:
        return False
    if cur not in fx_node.args[:2]:
        return False
    other = _other(fx_node, cur)
    return other is not cur and _bias_input(values.get(other), n) is not None


def _activation(fx_node, cur) -> tuple[str, tuple[float, ...], str] | None:
    name = op_name(fx_node.target)
    if not fx_node.args or fx_node.args[0] is not cur:
        return None
    args, kw = fx_node.args[1:], fx_node.kwargs
    if name in _PLAIN and not args and not kw:
        return _PLAIN[name], (), ""
    if name == "gelu" and not args:
        approx = kw.get("approximate", "none")
        return ("gelu", (), approx) if approx in ("none", "tanh") else None
    if name == "leaky_relu" and not kw:
        return "leaky_relu", (float(args[0]) if args else 0.01,), ""
    if name == "hardtanh" and not kw:
        lo, hi = (list(args) + [-1.0, 1.0][len(args):])[:2]
        return "hardtanh", (float(lo), float(hi)), ""
    if name == "clamp" and not kw and len(args) == 2 and None not in args:
        return "hardtanh", (float(args[0]), float(args[1])), ""
    return None


def _clamp_max(fx_node, cur) -> float | None:
    if op_name(fx_node.target) != "clamp" or fx_node.kwargs or fx_node.args[0] is not cur:
        return None
    args = list(fx_node.args[1:]) + [None, None]
    lo, hi = args[0], args[1]
    if hi is None or (lo is not None and float(lo) > 0.0) or float(hi) < 0:
        return None
    return float(hi)
