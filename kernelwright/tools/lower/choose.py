"""Choosing each fusion group's implementation space by measurement (HIERA).

Where a group may run as our kernel or as a library call (``g<i>.impl``, and for a library
call the form ``g<i>.vform``: oneDNN post-ops or the plain call + our epilogue kernel; for a
convolution also the layout ``g<i>.vlayout``: row-major or channels-last), every legal option
is timed on the nominal inputs and the fastest is kept, group by group. The timer
is injectable: ``timer(program) -> (seconds per forward, seconds of it inside library calls)``;
the default builds a group's options in this process and times them in interleaved rounds
after a warm-up, keeping each one's fastest round: options timed one after another saw
different load (on a busy 2-core machine the same oneDNN convolution measured 4 and 27 ms), and
interference only ever adds time.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import torch

from kernelwright.spec import GroupSpace, ImplementationSpace
from kernelwright.tools import allocator
from kernelwright.tools.lower.backends import codegen_for
from kernelwright.tools.lower.in_process import built_candidate
from kernelwright.tools.lower.ir import Node
from kernelwright.tools.lower.space import has_library_form

Timer = Callable[[Any], tuple[float, float]]

_OPTIONS = {  # option label -> (params, space, form)
    "kernel": ({"impl": "kernel"}, ImplementationSpace.CUSTOM_KERNEL, "our kernel"),
    "fused": ({"impl": "vendor", "vform": "fused"}, ImplementationSpace.VENDOR_LIBRARY,
              "oneDNN call with bias/activation post-ops"),
    "blas": ({"impl": "vendor", "vform": "blas"}, ImplementationSpace.VENDOR_LIBRARY,
             "library call + our epilogue kernel"),
    "vendor": ({"impl": "vendor"}, ImplementationSpace.VENDOR_LIBRARY,
               "library call + our epilogue kernel"),
}
_OPTIONS.update({  # a library convolution on channels-last copies, its result left so
    f"{label}_cl": ({**params, "vlayout": "cl"}, space, f"{form}, channels-last")
    for label, (params, space, form) in list(_OPTIONS.items()) if label != "kernel"})


def choose_spaces(prog: Any, timer: Timer | None = None
                  ) -> tuple[dict[str, Any], list[GroupSpace], float | None]:
    """``(params, per-group choices, share of time in our kernels)`` for ``prog``.

    ``params`` are the program's defaults with each measured group's winner; the share is
    measured on the chosen program (None when the timer cannot tell).
    """
    params = dict(prog.params)
    groups: list[GroupSpace] = []
    measured: dict[tuple, tuple[float, float]] = {}

    def timed_all(trials: list[dict[str, Any]]) -> list[tuple[float, float]]:
        keys = [tuple(sorted(t.items())) for t in trials]
        new = [t for t, key in zip(trials, keys, strict=True) if key not in measured]
        progs = [prog.with_params(t) for t in new]
        results = [timer(q) for q in progs] if timer is not None else time_programs(progs)
        measured.update(zip([tuple(sorted(t.items())) for t in new], results, strict=True))
        return [measured[key] for key in keys]

    def timed(p: dict[str, Any]) -> tuple[float, float]:
        return timed_all([p])[0]

    chosen: dict[int, GroupSpace] = {}
    sched_groups = prog.variants[0].sched.groups
    for members in _alike(prog).values():
        first, grp = members[0], sched_groups[members[0]]
        pre = f"g{first}."
        if f"{pre}impl" not in prog.space:
            chosen.update({gi: _fixed(gi, grp.kind, prog) for gi in members})
            continue
        library = ["fused", "blas"] if f"{pre}vform" in prog.space else ["vendor"]
        if f"{pre}vlayout" in prog.space:
            library += [f"{lb}_cl" for lb in library]
        labels = ["kernel"] + library

        def setting(label: str, members=members) -> dict[str, Any]:
            return {f"g{gi}.{k}": v for gi in members for k, v in _OPTIONS[label][0].items()}

        trials = [{**params, **setting(lb)} for lb in labels]
        times = {lb: t for lb, (t, _) in zip(labels, timed_all(trials), strict=True)}
        best = min(labels, key=lambda lb: times[lb])
        params.update(setting(best))
        _, space, form = _OPTIONS[best]
        ms = {f"{_OPTIONS[lb][1].value} ({_OPTIONS[lb][2]})": round(times[lb] * 1e3, 4)
              for lb in labels}
        others = ", ".join(f"{_OPTIONS[lb][2]} {times[lb] * 1e3:.3f} ms" for lb in labels
                           if lb != best)
        why = (f"measured on the nominal inputs: {form} {times[best] * 1e3:.3f} ms, "
               f"fastest of {len(labels)} (vs {others})")
        if len(members) > 1:
            why += (f"; chosen once for the {len(members)} alike groups "
                    f"{_names(members)}, each set the same way in every trial")
        for gi in members:
            chosen[gi] = GroupSpace(group=f"g{gi}", kind=grp.kind, space=space, form=form,
                                    why=why, timings_ms=ms)
    groups = [chosen[gi] for gi in range(len(sched_groups))]
    total, library = timed(params)
    share = None if total <= 0 else max(0.0, min(1.0, 1.0 - library / total))
    return params, groups, share


def _alike(prog: Any) -> dict[tuple, list[int]]:
    """Group indices by what the choice depends on, in order of first appearance: the kind,
    each member's class and measurable fields (shapes, GEMM sizes, strides, the shapes it
    reads) and the options the space offers the group. An RNN unrolled over 64 steps has 64
    GEMMs of one shape; timing each apart rebuilt the whole program 3 times per step."""
    out: dict[tuple, list[int]] = {}
    for gi, grp in enumerate(prog.variants[0].sched.groups):
        pre = f"g{gi}."
        options = tuple(sorted((k[len(pre):], tuple(v)) for k, v in prog.space.items()
                               if k.startswith(pre)))
        key = (grp.kind, tuple(_node_key(n) for n in grp.nodes), options)
        out.setdefault(key, []).append(gi)
    return out


def _node_key(node: Any) -> tuple:
    fields = tuple((f.name, _plain(getattr(node, f.name))) for f in dataclasses.fields(node)
                   if f.name not in ("name", "id"))
    return (type(node).__name__, fields)


def _plain(value: Any) -> Any:
    """A comparable stand-in: a node by its shape and dtype, element functions by kind only."""
    if isinstance(value, Node):
        return ("node", tuple(value.shape), str(value.dtype))
    if isinstance(value, tuple | list):
        return tuple(_plain(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _plain(v)) for k, v in value.items()))
    if value is None or isinstance(value, int | float | str | bool):
        return value
    if isinstance(value, torch.dtype):
        return str(value)
    return type(value).__name__


def _names(members: list[int]) -> str:
    names = [f"g{gi}" for gi in members]
    return ", ".join(names) if len(names) <= 6 else f"{', '.join(names[:5])}, ... {names[-1]}"


def _fixed(gi: int, kind: str, prog: Any) -> GroupSpace:
    if kind == "attention" and not has_library_form(prog.variants[0].sched.groups[gi]):
        why = "torch's fused attention kernel does not take these operands: our kernel"
    elif kind in ("gemm", "conv", "attention"):
        why = ("the contract does not allow vendor_library"
               if codegen_for(prog.backend).vendor_library
               else "no library form on this backend yet")
    else:
        why = f"a {kind} group has no library form: our fused kernel"
    return GroupSpace(group=f"g{gi}", kind=kind, space=ImplementationSpace.CUSTOM_KERNEL,
                      form="our kernel", why=why)


def time_program(prog: Any, min_time_s: float = 0.05, rounds: int = 5) -> tuple[float, float]:
    """Seconds per forward of ``prog``'s candidate on the nominal inputs (its fastest round),
    and the part of it spent in library calls; built and run in this process."""
    return time_programs([prog], min_time_s, rounds)[0]


def time_programs(progs: list[Any], min_time_s: float = 0.05, rounds: int = 5
                  ) -> list[tuple[float, float]]:
    """:func:`time_program` for several programs of one task, in interleaved rounds (a round of
    each in turn), so that they share the machine's conditions."""
    if not progs:
        return []
    from kernelwright.spec.inputs import nominal_inputs

    allocator.configure_this_process()  # as the harness's runners are (tools/allocator.py)
    task = progs[0].task.load_module()
    inputs = nominal_inputs(task, 0)
    clock = [0.0]
    with torch.no_grad():
        models = [_Storing(_built(prog, task, inputs, clock), inputs) for prog in progs]
        reps = []
        for model in models:
            start = time.perf_counter()
            model(*inputs)
            once = max(time.perf_counter() - start, 1e-6)
            reps.append(max(1, min(1000, int(min_time_s / once))))
        samples: list[list[tuple[float, float]]] = [[] for _ in models]
        for _ in range(rounds):
            for model, n, out in zip(models, reps, samples, strict=True):
                clock[0] = 0.0
                start = time.perf_counter()
                for _ in range(n):
                    model(*inputs)
                out.append(((time.perf_counter() - start) / n, clock[0] / n))
    return [min(s) for s in samples]


def _built(prog: Any, task: Any, inputs: list[Any], clock: list[float]) -> Any:
    """``prog``'s candidate with the reference's weights, run once, its library calls clocked."""
    model, _ = built_candidate(prog, task, strict=False)
    model(*inputs)
    for runner in model._runners.values():
        _time_library_calls(runner, clock)
    return model


class _Storing:
    """``model`` called as the harness calls a candidate: each output is copied into a dense
    buffer of its shape (``slots``, as ``_runner.store_outputs`` copies into the output
    arena), so a result left in another layout (channels-last) pays its conversion here as it
    does there; without it the planner chose a channels-last library convolution at 25 ms
    that the harness then timed at 73 ms."""

    def __init__(self, model: Any, inputs: list[Any]) -> None:
        self.model = model
        self.slots = [torch.empty(t.shape, dtype=t.dtype) if isinstance(t, torch.Tensor)
                      else None for t in _items(model(*inputs))]

    def __call__(self, *args: Any) -> Any:
        value = self.model(*args)
        for slot, item in zip(self.slots, _items(value), strict=False):
            if slot is not None:
                slot.copy_(item)
        return value


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, tuple | list) else [value]


def _time_library_calls(runner: Any, clock: list[float]) -> None:
    """Wrap a prepared runner's library calls so their time adds to ``clock[0]``."""

    def wrap(call):
        def timed(ts):
            start = time.perf_counter()
            try:
                return call(ts)
            finally:
                clock[0] += time.perf_counter() - start
        return timed

    calls = getattr(runner, "calls", None)
    if calls is not None and hasattr(runner, "vendor"):
        runner.calls = [(wrap(c), i) if v else (c, i)
                        for (c, i), v in zip(calls, runner.vendor, strict=True)]
    segments = getattr(runner, "segments", None)
    if segments is not None:
        runner.segments = [(wrap(s[0]), s[1]) if isinstance(s, tuple) else s for s in segments]
