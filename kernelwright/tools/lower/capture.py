"""Capture a reference module as a core-ATen graph with ``torch.export``.

The module runs in the mode it is given in (training mode: BatchNorm uses batch statistics),
then ``run_decompositions`` applies torch's core-ATen table minus the composite operators
this compiler lowers itself as fusable reductions (softmax, norms, var/std, logsumexp,
pooling, smooth activations) and with scaled dot-product attention routed to one operator
where it is lowered as a whole (``ops_attention``). Parameters, buffers and lifted constants
become graph inputs; the export signature says which is which.
"""

from __future__ import annotations

import functools
import logging
import operator
import warnings
from dataclasses import dataclass
from typing import Any

import torch
from torch._decomp import core_aten_decompositions, get_decompositions

from kernelwright.errors import LoweringError
from kernelwright.tools.lower.attention_fold import fold_attention
from kernelwright.tools.lower.ops_attention import routed_decomposition

log = logging.getLogger(__name__)

KEEP_COMPOSITE = {
    "logsumexp", "var", "var_mean", "std", "std_mean", "mish", "softplus", "silu",
    "hardswish", "hardsigmoid", "rms_norm", "_fused_rms_norm", "norm", "max_pool1d",
    "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_avg_pool3d", "avg_pool1d", "log_softmax", "softmax",
    "special_log_softmax", "special_softmax", "special_logsumexp", "linalg_vector_norm",
    "mv", "dot", "adaptive_max_pool1d",
}


# Core ATen keeps these as operators; torch's own decompositions turn them into index maps and
# pointwise blends (``_unsafe_index`` gathers + lerps), which the layout lowering folds in.
SPLIT_FURTHER = (
    "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d",
    "_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d",
    "upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d", "upsample_bicubic2d",
)


def decomposition_table() -> dict[Any, Any]:
    """torch's core-ATen decompositions without the composites lowered here directly, plus the
    ones of ``SPLIT_FURTHER`` (a fresh copy: the caller may change it)."""
    return dict(_materialized_table())


@functools.cache
def _materialized_table() -> dict[Any, Any]:
    """Built once per process: materialising torch's lazy table costs ~0.5 s, about a fifth
    of a small capture, and it is the same for every capture."""
    table = core_aten_decompositions()
    for op in list(table):
        packet = getattr(op, "overloadpacket", None)
        if packet is not None and packet.__name__ in KEEP_COMPOSITE:
            del table[op]
    ops = [getattr(torch.ops.aten, name) for name in SPLIT_FURTHER
           if hasattr(torch.ops.aten, name)]
    table.update(get_decompositions(ops))
    sdpa = torch.ops.aten.scaled_dot_product_attention.default
    if sdpa in table:  # one attention anchor where we lower it (ops_attention.py)
        table[sdpa] = routed_decomposition(table[sdpa])
    return dict(table.items())


def constant_values(ep: Any) -> dict[str, torch.Tensor]:
    """The values of an exported program's buffer and constant placeholders, by name."""
    from torch.export.graph_signature import InputKind

    out = {}
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.BUFFER and spec.persistent:
            value = ep.state_dict.get(spec.target)
        elif spec.kind in (InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            value = ep.constants.get(spec.target)
        else:
            continue
        if isinstance(value, torch.Tensor):
            out[spec.arg.name] = value
    return out


@dataclass
class Captured:
    """An exported program and what its graph inputs are."""

    program: Any  # torch.export.ExportedProgram after decompositions
    training: bool


def capture(model: torch.nn.Module, inputs: list[Any]) -> Captured:
    """Export ``model`` on ``inputs`` in its current mode and decompose to core ATen.

    Tensors held as plain module attributes are registered as non-persistent buffers first:
    torch.export then reports a forward that reassigns one (an RNN cell's ``self.hidden``)
    as a buffer mutation, where it would refuse an in-place write to a constant and silently
    bake in the first call's value of a reassigned one. The capture holds only if no output
    reads a buffer's value from before the call."""
    attributes = _tensor_attributes(model)
    for owner, name in attributes:
        value = owner.__dict__.pop(name)
        owner.register_buffer(name, value, persistent=False)
    try:
        ep = _export(model, inputs)
    except Exception as exc:
        raise LoweringError(
            f"torch.export could not capture the reference ({type(exc).__name__}: "
            f"{str(exc)[:600]}). Make forward traceable: no data-dependent Python control "
            "flow, no .item()/.tolist() on tensors, no in-place ops on inputs.") from exc
    _refuse_carried_state(ep)
    return Captured(ep, model.training)


def _export(model: torch.nn.Module, inputs: list[Any]) -> Any:
    with warnings.catch_warnings():
        # torch's own deprecation inside export (its pytree LeafSpec), not the user's code
        warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)
        with torch.no_grad():
            ep = torch.export.export(model, tuple(inputs), strict=False)
        ep = ep.run_decompositions(decomposition_table())
        fold_attention(ep.graph_module, constant_values(ep))
    return ep


def _tensor_attributes(model: torch.nn.Module) -> list[tuple[torch.nn.Module, str]]:
    """(owner, attribute) of every tensor held as a plain module attribute."""
    return [(mod, name) for mod in model.modules()
            for name, value in list(vars(mod).items())
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter)]


def _refuse_carried_state(ep: Any) -> None:
    """Fail if an output depends on a buffer's value that an earlier call wrote (a running
    statistic that only the update reads is fine)."""
    from torch.export.graph_signature import InputKind, OutputKind

    sig = ep.graph_signature
    mutated = set(sig.buffers_to_mutate.values())
    graph = ep.graph_module.graph
    results = next(n for n in graph.nodes if n.op == "output").args[0]
    needed = _ancestors([v for spec, v in zip(sig.output_specs, results, strict=True)
                         if spec.kind == OutputKind.USER_OUTPUT])
    for spec in sig.input_specs:
        if (spec.kind == InputKind.BUFFER and spec.target in mutated
                and spec.arg.name in needed):
            raise LoweringError(
                f"the reference keeps state across calls: forward reads self.{spec.target} "
                "and then reassigns it, so each output depends on the calls before it. "
                f"Pass the state in as an input (or overwrite self.{spec.target} from an "
                "input before reading it) and return the new state.")


def _ancestors(roots: list[Any]) -> set[str]:
    """Names of the graph nodes whose values ``roots`` are computed from. ``copy(dst, src)``
    takes only ``dst``'s shape and dtype: a state overwritten from an input is not read; and
    training-mode batch norm's normalised output does not read the running statistics it
    updates (its results 3 and 4)."""
    seen: set[str] = set()
    stack = [r for r in roots if hasattr(r, "all_input_nodes")]
    while stack:
        node = stack.pop()
        if node.name in seen:
            continue
        seen.add(node.name)
        preds = node.all_input_nodes
        if node.target is torch.ops.aten.copy.default:
            preds = node.args[1:]
        elif node.target is operator.getitem and _batch_stats_only(node):
            source = node.args[0]
            seen.add(source.name)
            preds = [a for i, a in enumerate(source.args) if i not in (3, 4)]
        stack.extend(p for p in preds if hasattr(p, "all_input_nodes"))
    return seen


def _batch_stats_only(item: Any) -> bool:
    """Whether ``item`` is output 0-2 of training-mode functional batch norm."""
    source = item.args[0]
    return (getattr(source, "target", None)
            is torch.ops.aten._native_batch_norm_legit_functional.default
            and item.args[1] < 3 and len(source.args) > 5 and source.args[5] is True)
