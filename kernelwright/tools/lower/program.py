"""``lower_task``: capture, build the IR, schedule, emit; and the ``LoweredProgram`` it returns.

One program covers every input-shape signature of the task's contract (nominal plus shape
variants; training and eval mode when the model has mode-dependent layers), each captured
and scheduled on its own; all kernels go into one source (one build).
"""

from __future__ import annotations

import pprint
import threading
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import torch

from kernelwright.errors import LoweringError
from kernelwright.spec import Candidate, Task
from kernelwright.tools.lower.backends import backend_names, codegen_for
from kernelwright.tools.lower.capture import capture
from kernelwright.tools.lower.codegen import NotFusable, Realized
from kernelwright.tools.lower.emit import KernelSource
from kernelwright.tools.lower.fusion import split_last
from kernelwright.tools.lower.graph import LoweredGraph, build_graph, constants_of
from kernelwright.tools.lower.ir import Input, Pointwise
from kernelwright.tools.lower.runtime import _signature, encode_tensor
from kernelwright.tools.lower.schedule import Group, Schedule, schedule
from kernelwright.tools.lower.shared_kernels import share_identical
from kernelwright.tools.lower.space import choose_defaults, group_space
from kernelwright.tools.lower.split_reduce import split_wide_reductions
from kernelwright.tools.lower.vendor import (
    VendorStep,
    vendor_attention,
    vendor_conv,
    vendor_step,
)
from kernelwright.tools.lower.vendor_fuse import post_ops

BACKENDS = backend_names()


@dataclass
class Variant:
    """One captured signature: its IR and schedule."""

    key: str
    graph: LoweredGraph
    sched: Schedule
    notes: list[str] = field(default_factory=list)  # rewrites made before scheduling


@dataclass
class LoweredProgram:
    """A task lowered to kernels for one backend, with its schedule choices.

    Example:
        >>> task = Task.from_path("examples/tasks/l1_row_softmax.py")  # doctest: +SKIP
        >>> prog = lower_task(task, "sycl")  # doctest: +SKIP
        >>> print(prog.describe())  # doctest: +SKIP
    """

    task: Task
    backend: str
    variants: list[Variant]
    state: dict[str, Any]
    consts: dict[str, str]
    params: dict[str, Any] = field(default_factory=dict)
    space: dict[str, list[Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    _emitted: tuple[str, dict[str, Any], list[str]] | None = None

    def with_params(self, params: dict[str, Any]) -> LoweredProgram:
        """A new program with these schedule choices (unknown keys raise ``ValueError``)."""
        unknown = set(params) - set(self.space)
        if unknown:
            raise ValueError(f"unknown schedule parameters {sorted(unknown)}; "
                             f"choose from {sorted(self.space)}")
        merged = {**self.params, **params}
        return LoweredProgram(self.task, self.backend, self.variants, self.state, self.consts,
                              merged, self.space, self.notes)

    @property
    def source(self) -> str:
        return self._emit()[0]

    @property
    def candidate(self) -> Candidate:
        src, plans, _ = self._emit()
        text = render_module(self, src, plans)
        return Candidate(source=text, backend=self.backend, params=dict(sorted(
            (k, v) for k, v in self.params.items())), origin="lowered")

    def describe(self) -> str:
        _, _, lines = self._emit()
        return "\n".join(lines)

    def _emit(self) -> tuple[str, dict[str, Any], list[str]]:
        if self._emitted is None:
            self._emitted = emit_program(self)
        return self._emitted


def emit_program(prog: LoweredProgram) -> tuple[str, dict[str, Any], list[str]]:
    parts, plans = [codegen_for(prog.backend).prelude()], {}
    lines = [f"lowered {prog.task.name} for {prog.backend}: {len(prog.variants)} signature(s)"]
    lines += prog.notes
    parts.append("// [EVOLVE_START] kernels: keep names and argument lists (the plans launch "
                 "them)")
    emitted = [emit_variant(var, vi, prog) for vi, var in enumerate(prog.variants)]
    if (cg := codegen_for(prog.backend)).shares_kernels:
        share_identical([k for k, _ in emitted], [p for _, p in emitted], cg.launch_offsets)
    for vi, (var, (kernels, plan)) in enumerate(zip(prog.variants, emitted, strict=True)):
        parts += [k.text for k in kernels if k.text]
        plans[var.key] = plan
        if vi == 0:
            lines += [f"  signature {var.key}: {len(kernels)} kernel(s)"]
            for k in kernels:
                lines.append(f"    {k.name}: {k.info['kind']} over {k.units} units "
                             f"x wg {k.local} -> {', '.join(k.info['nodes'])}")
            lines += [f"    {ln}" for ln in plan.pop("why", [])]
        else:
            plan.pop("why", None)
    parts.append("// [EVOLVE_END]")
    return "\n".join(parts), plans, lines


def emit_variant(var: Variant, vi: int, prog: LoweredProgram):
    g, sched = var.graph, var.sched
    names = buffer_names(g, sched)
    real = Realized(names)
    cg = codegen_for(prog.backend)
    idx_type = "int" if max([n.numel for n in g.nodes] + [1]) < 2**31 - 1 else "long long"
    groups: list[Group] = []
    for gi, top in enumerate(sched.groups):
        name = f"k{vi}_{gi}"
        groups += [Group(grp.kind, list(grp.main), list(grp.epilogue), list(grp.outer), nm)
                   for grp, nm in [(top, name)] + [(s, name + "s") for s in top.split_off]]
    kernels: list[KernelSource] = []
    i = 0
    while i < len(groups):
        grp = groups[i]
        params = _group_params(prog.params, gi_of(grp, sched))
        # named by the nominal variant's group numbers: another mode's may differ in kind
        if params.get("impl") == "vendor" and grp.kind in ("gemm", "attention", "conv"):
            make = {"gemm": vendor_step, "attention": vendor_attention,
                    "conv": partial(vendor_conv, channels_last=params.get("vlayout") == "cl")
                    }[grp.kind]
            fused = (post_ops(g, sched, grp) if params.get("vform", "fused") == "fused"
                     else None)
            if fused is not None and fused.end.id not in names:
                names[fused.end.id] = real[fused.end.id] = f"bv{fused.end.id}"
            step = make(grp.main[0], names, grp.name, fused)
            if step is not None:
                if step.layout is not None:  # our kernels read it in the library's layout
                    real.layouts[step.out] = step.layout
                kernels.append(step)
                done = fused.members if fused is not None else frozenset()
                rest = [e for e in grp.epilogue + grp.outer if e.id not in done]
                groups[i + 1:i + 1] = [Group("pointwise", [e], name=f"{grp.name}e{j}")
                                       for j, e in enumerate(rest)]
                i += 1
                continue
        if params.get("epi") == "pass" and grp.kind in ("gemm", "conv") and grp.epilogue:
            grp = _epilogue_apart(grp, groups, i, names, real)
        try:
            kernels.append(cg.emit_group(grp, real, names, params, idx_type))
            i += 1
        except NotFusable:
            # fallback: the scheduler's legality check (fusion.fusable) decides before
            # emission; should the code generator still find a member it cannot fuse, it
            # is split off here the same way
            split = split_last(grp)
            if split is None:
                raise LoweringError(f"internal: group {grp.name} cannot be emitted") from None
            split[1].name = grp.name + "s"
            groups[i:i + 1] = list(split)
    outs = {n.id for n in g.outputs}
    needed = _needed(kernels, g)
    keep = {nid: nm for nid, nm in names.items() if nm in needed or nid in outs
            or not nm.startswith("b")}
    if keep != names:
        names = keep
        kernels = [_re_emit(k, grp, cg, real, names, prog, sched, idx_type)
                   for k, grp in zip(kernels, groups, strict=True)]
    return kernels, make_plan(g, names, kernels, prog.backend)


def _epilogue_apart(grp: Group, groups: list[Group], i: int, names: dict[int, str],
                    real: Realized) -> Group:
    """Schedule ``epi=pass``: the anchor alone writes its result to memory, and each
    epilogue member becomes a pointwise kernel of its own right after it (where the
    epilogue's math is costly and the anchor's store would run it one element at a time)."""
    anchor = grp.main[0]
    if anchor.id not in names:
        names[anchor.id] = real[anchor.id] = f"b{len(names)}"
    groups[i + 1:i + 1] = [Group("pointwise", [e], name=f"{grp.name}e{j}")
                           for j, e in enumerate(grp.epilogue)]
    groups[i] = Group(grp.kind, [anchor], [], [], grp.name)
    return groups[i]


def _re_emit(old, grp, cg, real, names, prog, sched, idx_type):
    if isinstance(old, VendorStep):
        return old
    return cg.emit_group(grp, real, names, _group_params(prog.params, gi_of(grp, sched)),
                         idx_type)


def gi_of(grp: Group, sched: Schedule) -> str:
    return grp.name.split("_", 1)[1].split(".")[0]


def _group_params(params: dict[str, Any], gi: str) -> dict[str, Any]:
    pre = f"g{gi}."
    return {k[len(pre):]: v for k, v in params.items() if k.startswith(pre)}


def buffer_names(g: LoweredGraph, sched: Schedule) -> dict[int, str]:
    names: dict[int, str] = {}
    for inp in g.user_inputs:
        if inp is not None:
            names[inp.id] = f"x{len(names)}"
    for inp in g.state:
        names[inp.id] = f"p_{_ident(inp.target)}"
    for inp, _ in g.consts:
        names[inp.id] = f"c_{_ident(inp.target)}"
    for n in g.nodes:
        if n.id in sched.realized and n.id not in names:
            names[n.id] = f"b{len(names)}"
    return names


def _ident(text: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in text)


def _needed(kernels: list[KernelSource], g: LoweredGraph) -> set[str]:
    reads = {nm for k in kernels for nm in k.info["reads"]}
    return reads | {f"x{i}" for i in range(len(g.user_inputs))}


def make_plan(g: LoweredGraph, names: dict[int, str], kernels: list[KernelSource],
              backend: str) -> dict[str, Any]:
    outs = [(names[n.id], list(n.shape), str(n.dtype).removeprefix("torch."))
            for n in g.outputs]
    fixed = {names[i.id] for i in g.user_inputs if i is not None}
    fixed |= {names[i.id] for i in g.state} | {names[i.id] for i, _ in g.consts}
    out_names = {o[0] for o in outs}
    by_id = {n.id: n for n in g.nodes}
    temps = {nm: (list(by_id[i].shape), str(by_id[i].dtype).removeprefix("torch."))
             for i, nm in names.items() if nm not in fixed and nm not in out_names
             and i in by_id}
    steps = []
    for k in kernels:
        if isinstance(k, VendorStep):
            steps.append(k.step())
            continue
        glob = k.units * k.local if k.cooperative else -(-k.units // k.local) * k.local
        steps.append({"kernel": k.name, "args": k.args, "global": max(glob, k.local),
                      "local": k.local, "units": k.units,
                      **({"cooperative": True} if k.cooperative else {})})
    return {
        "inputs": [names[i.id] if i is not None else None for i in g.user_inputs],
        "state": [(names[i.id], i.target) for i in g.state],
        "consts": [(names[i.id], i.target) for i, _ in g.consts],
        "temps": temps, "outputs": outs, "single": len(g.outputs) == 1 and g.single,
        "steps": steps,
    }


def render_module(prog: LoweredProgram, source: str, plans: dict[str, Any]) -> str:
    head = prog.describe().splitlines()
    doc = "\n".join(["Lowered by kernelwright (kernelwright.tools.lower).", ""] + head)
    doc = doc.replace('"""', "'''").replace("\\", "/")
    return (f'"""{doc}\n"""\n\n'
            "from kernelwright.tools.lower.runtime import LoweredModule\n\n"
            f"BACKEND = {prog.backend!r}\n"
            f"LAUNCH = {prog.params.get('launch', 'steps')!r}\n"
            f"OPTIONS = {codegen_for(prog.backend).compile_options!r}\n\n"
            f'SOURCE = r"""\n{source}\n"""\n\n'
            f"PLANS = {pprint.pformat(plans, width=99, sort_dicts=True)}\n\n"
            f"STATE = {pprint.pformat(prog.state, width=99)}\n\n"
            f"CONSTS = {pprint.pformat(prog.consts, width=99)}\n\n\n"
            "class ModelNew(LoweredModule):\n"
            "    backend = BACKEND\n    launch = LAUNCH\n    options = OPTIONS\n"
            "    source = SOURCE\n"
            "    plans = PLANS\n"
            "    state = STATE\n    consts = CONSTS\n")


# -- entry point -------------------------------------------------------------------------

_MODE_DEPENDENT = (torch.nn.modules.batchnorm._BatchNorm, torch.nn.modules.dropout._DropoutNd,
                   torch.nn.modules.instancenorm._InstanceNorm)


def lower_task(task: Task, backend: str = "sycl", params: dict[str, Any] | None = None,
               *, contract: Any = None) -> LoweredProgram:
    """Lower ``task``'s reference to fused kernels for ``backend`` (sycl, cpp or cuda).

    Raises:
        LoweringError: an operator or form has no lowering; the message names it and the fix.
    """
    with _LOWERING:  # torch.export and the seeded model build are not thread-safe
        return _lower_task(task, backend, params, contract)


# One lowering at a time per process: a campaign slicing two tasks at once exported both
# references concurrently and torch.export failed ("fake tensor in the exported program").
_LOWERING = threading.RLock()


def _lower_task(task: Task, backend: str, params: dict[str, Any] | None,
                contract: Any) -> LoweredProgram:
    backend = codegen_for(backend).name  # unknown names raise ValueError listing the choices
    from kernelwright.errors import TaskError
    from kernelwright.spec import derive_contract, variant_inputs
    from kernelwright.spec.inputs import init_inputs_for, nominal_inputs

    module = task.module()  # the module Task.from_path imported: no second import here
    if contract is None:
        try:
            contract = derive_contract(task)
        except TaskError:  # no shape variants derivable: lower the nominal shapes only
            contract = None
    input_sets = ([variant_inputs(module, v, 0) for v in contract.variants] if contract
                  else [nominal_inputs(module, 0)])
    torch.manual_seed(0)
    model = module.Model(*init_inputs_for(module))
    modes = [True, False] if any(isinstance(m, _MODE_DEPENDENT) for m in model.modules()) \
        else [model.training]
    state = {k: [list(v.shape), str(v.dtype).removeprefix("torch."), k in dict(
        model.named_parameters())] for k, v in model.state_dict().items()}
    # a backend running one work-group per row splits full reductions (split_reduce.py)
    split = codegen_for(backend).cooperative_rows
    cache_key = (str(task.path), task.source_hash, tuple(modes), split,
                 tuple(_signature(False, tuple(i)) for i in input_sets))
    if cache_key in _CAPTURES:
        variants, consts = _CAPTURES[cache_key]
    else:
        variants, consts = _capture_all(model, input_sets, modes, split)
        if len(_CAPTURES) >= 16:
            _CAPTURES.pop(next(iter(_CAPTURES)))
        _CAPTURES[cache_key] = (variants, consts)
    allowed = [s.value for s in contract.allowed_spaces] if contract else ["custom_kernel"]
    notes = [f"implementation spaces allowed by the contract: {', '.join(allowed)}"]
    notes += variants[0].notes
    prog = LoweredProgram(task, backend, variants, state, consts, notes=notes)
    prog.space = group_space(prog, contract)
    prog.params = choose_defaults(prog, contract)
    if params:
        prog = prog.with_params(params)
    return prog


# Captured IR per task content and input shapes: capture is backend independent and costs
# about a second per signature, so lowering the same task for several backends (or again
# with other schedule choices) reuses it. Emission never mutates it.
_CAPTURES: dict[tuple, tuple[list[Variant], dict[str, str]]] = {}


def _capture_all(model, input_sets, modes,
                 split: bool) -> tuple[list[Variant], dict[str, str]]:
    variants, consts, seen = [], {}, set()
    for inputs in input_sets:
        for mode in modes:
            key = _signature(mode, tuple(inputs))
            if key in seen:
                continue
            seen.add(key)
            model.train(mode)
            cap = capture(model, inputs)
            cvals = constants_of(cap.program)
            g = build_graph(cap, cvals)
            g.single = isinstance(_reference_output(model, inputs), torch.Tensor)
            _fix_outputs(g)
            for inp, val in g.consts:
                consts[inp.target] = encode_tensor(val)
            notes = split_wide_reductions(g) if split else []
            variants.append(Variant(key, g, schedule(g), notes))
    return variants, consts


def _reference_output(model, inputs):
    with torch.no_grad():
        return model(*inputs)


def _fix_outputs(g: LoweredGraph) -> None:
    """Every output gets a buffer of its own: copy inputs and repeated outputs."""
    seen: set[int] = set()
    for i, n in enumerate(g.outputs):
        if isinstance(n, Input) or n.id in seen:
            copy = Pointwise(tuple(n.shape), n.dtype, [n], name=f"copy{i}", cost=0,
                             fn=lambda k, idx, n=n: n.load(k, idx))
            g.nodes.append(copy)
            g.outputs[i] = copy
            n = copy
        seen.add(n.id)
