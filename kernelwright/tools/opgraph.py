"""The operator graph of a reference: which aten operators it runs, on what shapes, at what cost.

Traced by running the reference once under a ``TorchDispatchMode`` (robust to control flow that
``torch.fx`` cannot trace). Used by the planner to classify a task (HIERA) and by the profiler to
place a kernel on the roofline.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict
from torch.utils._python_dispatch import TorchDispatchMode

from kernelwright.spec.opclass import OperatorClass

# Operators that only allocate, view or copy data: no arithmetic.
_STRUCTURAL = {
    "empty",
    "empty_like",
    "empty_strided",
    "new_empty",
    "zeros",
    "zeros_like",
    "ones",
    "ones_like",
    "full",
    "full_like",
    "fill",
    "fill_",
    "zero_",
    "view",
    "_unsafe_view",
    "reshape",
    "as_strided",
    "expand",
    "t",
    "transpose",
    "permute",
    "select",
    "slice",
    "unsqueeze",
    "squeeze",
    "detach",
    "alias",
    "clone",
    "copy_",
    "contiguous",
    "_to_copy",
    "lift_fresh",
    "split",
    "chunk",
    "unbind",
    "lift_fresh_copy",
    "resize_",
    "set_",
}
_GEMM = {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "_mm", "addmv", "mv", "dot"}
_ROWWISE = {
    "_softmax",
    "softmax",
    "_log_softmax",
    "log_softmax",
    "native_layer_norm",
    "layer_norm",
    "rms_norm",
    "_fused_rms_norm",
    "native_group_norm",
    "_safe_softmax",
}
_REDUCTION = {
    "sum",
    "mean",
    "amax",
    "amin",
    "max",
    "min",
    "prod",
    "var",
    "std",
    "norm",
    "linalg_vector_norm",
    "argmax",
    "argmin",
    "logsumexp",
    "cumsum",
}
_LAYOUT_OUT = {"clone", "contiguous", "_to_copy", "copy_"}


class TracedOp(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str  # aten overload packet name, e.g. "addmm"
    input_shapes: list[tuple[int, ...]]
    output_shapes: list[tuple[int, ...]]
    scalars: list[Any]  # non-tensor arguments (eps, dims, approximate=...)
    flops: float
    args: list[str] = []  # what each tensor argument is: "in:x", "p:weight", "t3", "p:w^T"
    out: str = ""  # the name its first output gets ("t<k>", or its argument's for views)


class OpGraph(BaseModel):
    """The traced operators of one reference call, in execution order."""

    model_config = ConfigDict(frozen=True)
    ops: list[TracedOp]
    input_bytes: int
    output_bytes: int

    @property
    def compute_ops(self) -> list[TracedOp]:
        return [op for op in self.ops if op.name not in _STRUCTURAL]

    @property
    def flops(self) -> float:
        return sum(op.flops for op in self.ops)

    @property
    def min_bytes(self) -> int:
        """Bytes any implementation must move: read every input once, write every output."""
        return self.input_bytes + self.output_bytes

    def names(self) -> list[str]:
        return [op.name for op in self.compute_ops]

    def classify(self) -> OperatorClass:
        names = set(self.names())
        if names & _GEMM:
            return OperatorClass.GEMM
        if names & _ROWWISE or _is_rms_pattern(names):
            return OperatorClass.ROWWISE_NORM
        if names & _REDUCTION:
            return OperatorClass.REDUCTION
        if not names:
            layout = any(op.name in _LAYOUT_OUT for op in self.ops)
            return OperatorClass.LAYOUT if layout else OperatorClass.OTHER
        return OperatorClass.ELEMENTWISE

    def describe(self) -> str:
        shown = ", ".join(self.names()) or "layout only"
        return (
            f"{len(self.compute_ops)} compute ops ({shown}); {self.flops / 1e6:.2f} MFLOP, "
            f">= {self.min_bytes / 1e6:.2f} MB moved"
        )


def _is_rms_pattern(names: set[str]) -> bool:
    return {"rsqrt", "mean"} <= names or {"rsqrt", "pow", "mean"} <= names


_TRANSPOSING = {"t", "transpose", "permute"}


class _Recorder(TorchDispatchMode):
    """Records every aten call with the provenance of its tensor arguments."""

    def __init__(self, names: dict[int, str], keep: list[Any]) -> None:
        super().__init__()
        self.ops: list[TracedOp] = []
        self.names = names  # id(tensor) -> binding; ``keep`` holds the tensors so ids stay unique
        self.keep = keep

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        flat_in = [a for a in _flatten((args, kwargs)) if isinstance(a, torch.Tensor)]
        flat_out = [o for o in _flatten(out) if isinstance(o, torch.Tensor)]
        scalars = [a for a in _flatten((args, kwargs)) if isinstance(a, (int, float, str, bool))]
        name = func.overloadpacket.__name__
        bindings = [self.names.get(id(t), "const") for t in flat_in]
        produced = self._name_outputs(name, bindings, flat_out)
        self.ops.append(
            TracedOp(
                name=name,
                input_shapes=[tuple(t.shape) for t in flat_in],
                output_shapes=[tuple(t.shape) for t in flat_out],
                scalars=scalars[:8],
                flops=_flops(name, flat_in, flat_out),
                args=bindings,
                out=produced,
            )
        )
        return out

    def _name_outputs(self, name: str, bindings: list[str], outputs: list[torch.Tensor]) -> str:
        if name in _STRUCTURAL and bindings and name not in {"copy_", "fill_", "zero_"}:
            produced = bindings[0] + ("^T" if name in _TRANSPOSING else "")
            produced = produced.replace("^T^T", "")
        else:
            produced = f"t{len(self.ops)}"
        for tensor in outputs:
            self.names[id(tensor)] = produced
            self.keep.append(tensor)
        return produced


def _flatten(obj: Any) -> list[Any]:
    if isinstance(obj, (list, tuple)):
        return [x for item in obj for x in _flatten(item)]
    if isinstance(obj, dict):
        return [x for item in obj.values() for x in _flatten(item)]
    return [obj]


def _flops(name: str, inputs: list[torch.Tensor], outputs: list[torch.Tensor]) -> float:
    if name in _STRUCTURAL:
        return 0.0
    if name in _GEMM and outputs:
        # Inner dimension: the last dim of the first operand that has rank >= 2 or 1 for mv.
        mats = [t for t in inputs if t.dim() >= 1]
        inner = mats[-2].shape[-1] if len(mats) >= 2 else 1
        return 2.0 * outputs[0].numel() * inner
    work = max([t.numel() for t in inputs + outputs] or [0])
    per_element = 8.0 if name in _ROWWISE or name in {"gelu", "erf", "tanh", "exp"} else 1.0
    return per_element * work


def _nbytes(values: Any) -> int:
    return sum(
        t.numel() * t.element_size() for t in _flatten(values) if isinstance(t, torch.Tensor)
    )


def trace_reference(
    model: torch.nn.Module, inputs: list[Any], input_names: list[str] | None = None
) -> OpGraph:
    """Run ``model(*inputs)`` once and record its aten operators and what they consume."""
    input_names = input_names or [f"arg{i}" for i in range(len(inputs))]
    names: dict[int, str] = {}
    keep: list[Any] = list(inputs)
    for label, t in zip(input_names, inputs, strict=False):
        if isinstance(t, torch.Tensor):
            names[id(t)] = f"in:{label}"
    for label, t in [*model.named_parameters(), *model.named_buffers()]:
        names[id(t)] = f"p:{label}"
        keep.append(t)
    recorder = _Recorder(names, keep)
    with torch.no_grad(), recorder:
        out = model(*inputs)
    params = _nbytes(list(model.parameters()) + list(model.buffers()))
    return OpGraph(
        ops=recorder.ops, input_bytes=_nbytes(inputs) + params, output_bytes=_nbytes(out)
    )


def arithmetic_intensity(graph: OpGraph) -> float:
    """FLOP per byte of compulsory traffic (``inf`` when nothing must move)."""
    return graph.flops / graph.min_bytes if graph.min_bytes else math.inf
