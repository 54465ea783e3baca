"""Map a traced operator graph to an op spec the kernel templates can implement.

The planner's bridge between "what the reference computes" (aten operators with the provenance
of their arguments, from ``tools.opgraph``) and "what a template renders" (``templates.OpSpec``).
Each rule recognises one family of operator sequences; a graph no rule recognises gets no
template, and the plan says so rather than guessing.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch

from kernelwright.spec.inputs import init_inputs_for
from kernelwright.templates import OP_SPECS, OpSpec, templates_for
from kernelwright.tools.opgraph import OpGraph, TracedOp

_ACTIVATIONS = {"silu": "silu", "relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh"}


@dataclass(frozen=True)
class ModelShape:
    """How ``ModelNew`` must look from outside to stand in for the reference ``Model``."""

    init_args: str
    init_body: list[str]
    inputs: list[str]

    def common(self) -> dict[str, Any]:
        return {"init_args": self.init_args, "init_body": self.init_body, "inputs": self.inputs}


@dataclass(frozen=True)
class TemplateMatch:
    name: str
    op_spec: dict[str, Any]


def model_shape(module: ModuleType) -> ModelShape:
    """Constructor signature, parameters (same names and shapes) and forward inputs of Model."""
    args = _init_args(module.Model)
    forward = inspect.signature(module.Model.forward)
    inputs = [name for name in forward.parameters if name != "self"]
    model = module.Model(*init_inputs_for(module))
    return ModelShape(init_args=args, init_body=_parameter_statements(model), inputs=inputs)


def _init_args(model_cls: type) -> str:
    """The constructor's parameters as source, without ``self``; empty when ``Model`` keeps
    ``nn.Module.__init__`` (whose ``*args: Any, **kwargs: Any`` would name ``Any``, which a
    generated module does not import)."""
    if model_cls.__init__ is torch.nn.Module.__init__:
        return ""
    init = inspect.signature(model_cls.__init__)
    return ", ".join(str(p) for name, p in init.parameters.items() if name != "self")


def _parameter_statements(model: torch.nn.Module) -> list[str]:
    """Statements recreating every parameter (empty; the harness loads the reference's values)."""
    lines, containers = [], set()
    for name, tensor in model.named_parameters():
        parts = name.split(".")
        for depth in range(1, len(parts)):
            path = ".".join(parts[:depth])
            if path not in containers:
                containers.add(path)
                lines.append(f"self.{path} = nn.Module()")
        shape = ", ".join(map(str, tensor.shape))
        dtype = str(tensor.dtype)
        lines.append(f"self.{name} = nn.Parameter(torch.empty(({shape},), dtype={dtype}))")
    return lines


def op_spec_for(graph: OpGraph, shape: ModelShape) -> OpSpec | None:
    """The op spec of the first rule that recognises ``graph`` (``None`` if none does)."""
    ops = graph.compute_ops
    for rule in (_gemm, _layernorm, _rmsnorm, _softmax, _reduction, _layout, _elementwise):
        fields = rule(ops, graph)
        if fields is not None:
            kind, values = fields
            try:
                return OP_SPECS[kind](**shape.common(), **values)
            except ValueError:
                return None
    return None


def match_templates(graph: OpGraph, shape: ModelShape, backend: str) -> list[TemplateMatch]:
    spec = op_spec_for(graph, shape)
    if spec is None:
        return []
    data = spec.model_dump()
    return [TemplateMatch(t.name, data) for t in templates_for(spec.operator_class, backend)]


def op_spec_from_plan(operator_class: str, data: dict[str, Any]) -> OpSpec | None:
    return OP_SPECS[operator_class](**data) if data and operator_class in OP_SPECS else None


# -- rules: each takes the compute ops and returns (operator class, spec fields) or None -------
Rule = Callable[[list[TracedOp], OpGraph], tuple[str, dict[str, Any]] | None]


def _input(binding: str) -> str | None:
    return binding.removeprefix("in:") if binding.startswith("in:") else None


def _expr(binding: str) -> str | None:
    """A forward input name or ``self.<param>`` for a binding, transposes stripped."""
    base = binding.removesuffix("^T")
    if base.startswith("p:"):
        return "self." + base[2:]
    return _input(base)


def _scalar(op: TracedOp) -> float | None:
    nums = [s for s in op.scalars if isinstance(s, (int, float)) and not isinstance(s, bool)]
    return float(nums[0]) if len(op.args) == 1 and nums else None


def _epilogue_step(op: TracedOp, prev: str) -> tuple[str, dict[str, str]] | None:
    """One elementwise op continuing the chain from ``prev``: (op name, spec fields)."""
    if not op.args or op.args[0] != prev:
        return None
    if op.name == "gelu":
        return ("gelu_tanh" if "tanh" in op.scalars else "gelu_erf"), {}
    if op.name in _ACTIVATIONS and len(op.args) == 1:
        return _ACTIVATIONS[op.name], {}
    if op.name in {"mul", "div"} and _scalar(op) is not None:
        value = _scalar(op) if op.name == "mul" else 1.0 / _scalar(op)
        return "scale", {"scale": repr(value)}
    if op.name == "add" and len(op.args) == 2 and op.args[1].startswith("p:"):
        return "bias", {"bias": _expr(op.args[1])}
    if op.name == "add" and len(op.args) == 2 and _input(op.args[1]):
        return "add", {"addend": _input(op.args[1])}
    return None


def _chain(ops: list[TracedOp], start: str) -> tuple[list[str], dict[str, str]] | None:
    names: list[str] = []
    fields: dict[str, str] = {}
    prev = start
    for op in ops:
        step = _epilogue_step(op, prev)
        if step is None or (step[0] in names and step[0] in {"scale", "bias", "add"}):
            return None
        names.append(step[0])
        fields.update(step[1])
        prev = op.out
    return names, fields


def _elementwise(ops, graph):
    if not ops or not _input(ops[0].args[0] if ops[0].args else ""):
        return None
    chain = _chain(ops, ops[0].args[0])
    return ("elementwise", {"ops": chain[0], **chain[1]}) if chain else None


def _gemm(ops, graph):
    if not ops or ops[0].name not in {"mm", "bmm", "matmul", "addmm"}:
        return None
    first, rest = ops[0], ops[1:]
    a_bind, b_bind = (first.args[1], first.args[2]) if first.name == "addmm" else first.args[:2]
    a = _input(a_bind)
    b = _expr(b_bind)
    if a is None or b is None:
        return None
    softmax = bool(rest) and rest[-1].name in {"_softmax", "softmax"}
    chain = _chain(rest[:-1] if softmax else rest, first.out)
    if chain is None:
        return None
    epilogue, fields = chain
    if first.name == "addmm":
        epilogue, fields = ["bias", *epilogue], {**fields, "bias": _expr(first.args[0])}
    if "add" in epilogue:
        return None
    return "gemm", {
        "a": a,
        "b": b,
        "b_layout": "nk" if b_bind.endswith("^T") else "kn",
        "batched": first.name == "bmm",
        "epilogue": epilogue,
        "softmax": softmax,
        **fields,
    }


def _layernorm(ops, graph):
    residual = None
    if len(ops) == 2 and ops[0].name == "add" and len(ops[0].args) == 2:
        residual = _input(ops[0].args[1])
        ops = ops[1:] if residual and _input(ops[0].args[0]) else ops
    if len(ops) != 1 or ops[0].name not in {"native_layer_norm", "layer_norm"}:
        return None
    op = ops[0]
    params = [_expr(b) for b in op.args[1:]]
    eps = [s for s in op.scalars if isinstance(s, float)]
    fields = {
        "kind": "layernorm",
        "eps": repr(eps[-1] if eps else 1e-5),
        "residual": residual,
        "weight": params[0] if params else None,
        "bias": params[1] if len(params) > 1 else None,
    }
    return "rowwise_norm", fields


def _rmsnorm(ops, graph):
    names = [op.name for op in ops]
    if names[:5] != ["pow", "mean", "add", "rsqrt", "mul"] or len(names) > 6:
        return None
    weight = None
    if len(names) == 6:
        params = [b for b in ops[5].args if b.startswith("p:")]
        if ops[5].name != "mul" or not params:
            return None
        weight = _expr(params[0])
    return "rowwise_norm", {"kind": "rmsnorm", "eps": repr(_scalar(ops[2])), "weight": weight}


def _softmax(ops, graph):
    if not ops or ops[-1].name not in {"_softmax", "softmax"} or len(ops) > 2:
        return None
    fields: dict[str, Any] = {"kind": "softmax"}
    if len(ops) == 2:
        step = _epilogue_step(ops[0], ops[0].args[0] if ops[0].args else "")
        if step is None or step[0] != "scale":
            return None
        fields.update(step[1])
    return "rowwise_norm", fields


def _reduction(ops, graph):
    kinds = {"sum": "sum", "mean": "mean", "amax": "max"}
    if len(ops) != 1 or ops[0].name not in kinds or not _input(ops[0].args[0]):
        return None
    dims = [s for s in ops[0].scalars if isinstance(s, int) and not isinstance(s, bool)]
    rank = len(ops[0].input_shapes[0])
    if dims[:1] not in ([-1], [rank - 1]):
        return None
    return "reduction", {"op": kinds[ops[0].name], "keepdim": True in ops[0].scalars}


def _layout(ops, graph):
    if ops:
        return None
    transposed = [op for op in graph.ops if op.name in {"t", "transpose"}]
    copied = [op for op in graph.ops if op.name in {"clone", "contiguous", "_to_copy"}]
    return ("layout", {"op": "transpose"}) if transposed and copied else None
