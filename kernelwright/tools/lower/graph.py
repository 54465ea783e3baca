"""Build the IR of one captured program: inputs, nodes in order, outputs."""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.export.graph_signature import InputKind, OutputKind

from kernelwright.errors import LoweringError
from kernelwright.tools.lower import (  # noqa: F401  (they register the lowerings)
    ops_activation,
    ops_anchor,
    ops_attention,
    ops_layout,
    ops_norm,
    ops_pointwise,
    ops_reduce,
)
from kernelwright.tools.lower.builder import LOWERINGS, Builder, make_input, op_name
from kernelwright.tools.lower.capture import Captured
from kernelwright.tools.lower.ir import Input, Node

# Checks torch.export leaves in the graph; they compute nothing.
NO_OPS = {"_assert_tensor_metadata", "_assert_async", "_assert_scalar", "sym_constrain_range",
          "sym_constrain_range_for_size", "_functional_assert_async", "_print"}


@dataclass
class LoweredGraph:
    """The IR of one shape signature."""

    user_inputs: list[Input | None]  # None for non-tensor inputs (specialised constants)
    state: list[Input]  # parameters and buffers (target = state_dict name)
    consts: list[tuple[Input, torch.Tensor]]  # lifted constants and their values
    nodes: list[Node]
    outputs: list[Node]
    ops: list[str] = field(default_factory=list)
    single: bool = True
    # FX node -> IR value: the vendor space reads operator chains (anchor + bias + activation)
    values: dict[Any, Any] = field(default_factory=dict, repr=False)


def build_graph(cap: Captured, constants: dict[str, torch.Tensor]) -> LoweredGraph:
    ep = cap.program
    gm = ep.graph_module
    b = Builder()
    kinds = {spec.arg.name: spec for spec in ep.graph_signature.input_specs}
    user, state, consts, ops = [], [], [], []
    for fx_node in gm.graph.nodes:
        if fx_node.op == "placeholder":
            spec = kinds[fx_node.name]
            val = fx_node.meta.get("val")
            if not isinstance(val, torch.Tensor):
                b.values[fx_node] = val
                if spec.kind == InputKind.USER_INPUT:
                    user.append(None)
                continue
            # a non-persistent buffer is not in the state_dict the harness loads: its value
            # is folded in like a lifted constant
            role = {InputKind.USER_INPUT: "user", InputKind.PARAMETER: "param",
                    InputKind.BUFFER: "param" if spec.persistent else "const",
                    }.get(spec.kind, "const")
            inp = make_input(val.shape, val.dtype, role, spec.target or fx_node.name,
                             f"in_{fx_node.name}")
            b.values[fx_node] = inp
            if role == "user":
                user.append(inp)
            elif role == "param":
                state.append(inp)
            else:
                if spec.target not in constants:
                    raise LoweringError(f"constant {spec.target} of the exported program has "
                                        "no value; make it a registered buffer")
                consts.append((inp, constants[spec.target]))
        elif fx_node.op == "call_function":
            b.current = fx_node
            if fx_node.target is operator.getitem:
                b.values[fx_node] = b.values[fx_node.args[0]][fx_node.args[1]]
                continue
            name = op_name(fx_node.target)
            if name in NO_OPS:
                continue
            ops.append(name)
            fn = LOWERINGS.get(name)
            if fn is None:
                raise LoweringError(
                    f"operator {fx_node.target} (in `{fx_node.format_node()}`) has no lowering "
                    "yet: rewrite that step of the reference with supported operators, or add "
                    "a lowering in kernelwright/tools/lower/ops_*.py")
            b.values[fx_node] = fn(b, fx_node)
        elif fx_node.op == "output":
            outs = _user_outputs(ep, fx_node, b)
    return LoweredGraph(user, state, consts, live_nodes(b.nodes, outs), outs, ops,
                        values=b.values)


def live_nodes(nodes: list[Node], outputs: list[Node]) -> list[Node]:
    """``nodes`` (in order) that an output depends on. A traced operator can yield values
    the model drops (``torch.min(x, dim)[0]`` also yields the indices): computing them was a
    kernel of its own, run on every call (KernelBench l1_53: a second, scalar pass over the
    input for indices nobody read)."""
    live: set[int] = set()
    stack = list(outputs)
    while stack:
        n = stack.pop()
        if n.id not in live:
            live.add(n.id)
            stack.extend(n.deps)
    return [n for n in nodes if n.id in live]


def _user_outputs(ep, fx_node, b: Builder) -> list[Node]:
    specs = ep.graph_signature.output_specs
    vals = fx_node.args[0]
    out: list[Node] = []
    for spec, v in zip(specs, vals, strict=True):
        if spec.kind != OutputKind.USER_OUTPUT:
            continue  # buffer mutations (running statistics) are not reproduced
        node = b.arg(v)
        if not isinstance(node, Node):
            raise LoweringError("the reference returns a non-tensor value; return tensors only")
        out.append(node)
    return out


def constants_of(ep) -> dict[str, torch.Tensor]:
    table: dict[str, Any] = {}
    for name, val in getattr(ep, "constants", {}).items():
        if isinstance(val, torch.Tensor):
            table[name] = val
    return table
