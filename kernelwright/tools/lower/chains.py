"""Prepared runners: one signature's launch plan with the per-call work done once.

``SyclChain`` submits every run of kernels in one C call (``kw_launch_chain``); ``CppChain``
calls each kernel through a ctypes prototype with argument slots resolved once. Library
(vendor) steps run between them and their result is bound as the step's buffer. The backends'
codegen classes pick them (``Codegen.prepared``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from kernelwright.tools.lower.runtime import dtype_of
from kernelwright.tools.lower.vendor_run import prepare as prepare_vendor

if TYPE_CHECKING:
    from kernelwright.tools.lower.runtime import LoweredModule


class SyclChain:
    """One signature's plan prepared for one-call launches: buffer order fixed, temporaries
    allocated once (never outputs: those are fresh per call)."""

    def __init__(self, owner: LoweredModule, plan: dict[str, Any]) -> None:
        from kernelwright.tools.backends import active_registry

        self.inputs = [i for i, n in enumerate(plan["inputs"]) if n is not None]
        self.state = [owner._state_tensor(t) for _, t in plan["state"]]
        self.consts = [owner._consts[t] for _, t in plan["consts"]]
        self.temps = [torch.empty(s, dtype=dtype_of(d)) for s, d in plan["temps"].values()]
        self.outputs = [(tuple(s), dtype_of(d)) for _, s, d in plan["outputs"]]
        self.single = plan["single"]
        order = ([plan["inputs"][i] for i in self.inputs] + [n for n, _ in plan["state"]]
                 + [n for n, _ in plan["consts"]] + list(plan["temps"])
                 + [n for n, _, _ in plan["outputs"]])
        slot = {}
        for i, n in enumerate(order):
            slot.setdefault(n, i)
        self.fixed = [c.data_ptr() for c in self.consts] + [t.data_ptr() for t in self.temps]
        be = active_registry().get(owner.backend)
        self.segments: list[Any] = []  # prepared chains and vendor calls, in order
        run: list[Any] = []
        for s in plan["steps"]:
            if "vendor" in s:
                if run:
                    self.segments.append(be.prepare_chain(run, len(order)))
                    run = []
                self.segments.append(prepare_vendor(s, slot))
                continue
            run.append((owner._kernels[s["kernel"]], [slot[a] for a in s["args"]],
                        s["global"], s["local"]))
        if run:
            self.segments.append(be.prepare_chain(run, len(order)))
        self.has_vendor = any(isinstance(s, tuple) for s in self.segments)
        self.bound = _bound_outputs(plan, slot, len(order) - len(self.outputs))

    def __call__(self, owner: LoweredModule, inputs: tuple[Any, ...]) -> Any:
        xs = [inputs[i] for i in self.inputs]
        xs = [x if x.is_contiguous() else x.contiguous() for x in xs]
        if not self.has_vendor:
            outs = [torch.empty(s, dtype=d) for s, d in self.outputs]
            ptrs = ([x.data_ptr() for x in xs] + [t.data_ptr() for t in self.state]
                    + self.fixed + [o.data_ptr() for o in outs])
            self.segments[0](ptrs)
            return outs[0] if self.single else tuple(outs)
        outs = [_EMPTY if i in self.bound else torch.empty(s, dtype=d)
                for i, (s, d) in enumerate(self.outputs)]
        tensors = xs + self.state + self.consts + self.temps + outs
        for seg in self.segments:
            if isinstance(seg, tuple):
                call, out = seg
                tensors[out] = call(tensors)
            else:
                seg([t.data_ptr() for t in tensors])
        outs = tensors[len(tensors) - len(self.outputs):]
        return outs[0] if self.single else tuple(outs)


class CppChain:
    """A C++ signature's plan with the per-call work cut to pointers: each kernel is called
    through its own ctypes prototype (all arguments ``void*``) with argument slots resolved
    once; temporaries are allocated once, outputs fresh per call."""

    def __init__(self, owner: LoweredModule, plan: dict[str, Any]) -> None:
        import ctypes

        self.inputs = [i for i, n in enumerate(plan["inputs"]) if n is not None]
        state = [owner._state_tensor(t) for _, t in plan["state"]]
        consts = [owner._consts[t] for _, t in plan["consts"]]
        self.temps = [torch.empty(s, dtype=dtype_of(d)) for s, d in plan["temps"].values()]
        self.state = state
        self.outputs = [(tuple(s), dtype_of(d)) for _, s, d in plan["outputs"]]
        self.single = plan["single"]
        order = ([plan["inputs"][i] for i in self.inputs] + [n for n, _ in plan["state"]]
                 + [n for n, _ in plan["consts"]] + list(plan["temps"])
                 + [n for n, _, _ in plan["outputs"]])
        slot: dict[str, int] = {}
        for i, n in enumerate(order):
            slot.setdefault(n, i)
        self.n_inputs = len(self.inputs)
        self.fixed = ([t.data_ptr() for t in state] + [c.data_ptr() for c in consts]
                      + [t.data_ptr() for t in self.temps])
        self.keep = consts
        self.consts = consts
        lib = ctypes.CDLL(str(owner._kernels.build.artifact))
        self.calls: list[Any] = []
        self.offsets: list[list[int] | None] = []  # bytes per argument (shared_kernels.py)
        for s in plan["steps"]:
            self.offsets.append(s.get("offsets"))
            if "vendor" in s:  # a library call: (call, output slot)
                self.calls.append(prepare_vendor(s, slot))
                continue
            fn = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * len(s["args"]))(
                (s["kernel"], lib))
            self.calls.append((fn, [slot[a] for a in s["args"]]))
        self.lib = lib
        self.vendor = [isinstance(c[1], int) for c in self.calls]
        self.bound = _bound_outputs(plan, slot, len(order) - len(self.outputs))

    def __call__(self, owner: LoweredModule, inputs: tuple[Any, ...]) -> Any:
        xs = [inputs[i] for i in self.inputs]
        xs = [x if x.is_contiguous() else x.contiguous() for x in xs]
        if not self.bound and not any(self.vendor):
            outs = [torch.empty(s, dtype=d) for s, d in self.outputs]
            ptrs = [x.data_ptr() for x in xs] + self.fixed + [o.data_ptr() for o in outs]
            for (fn, idx), off in zip(self.calls, self.offsets, strict=True):
                if off is None:
                    fn(*[ptrs[i] for i in idx])
                else:
                    fn(*_offset_pointers(ptrs, idx, off))
            return outs[0] if self.single else tuple(outs)
        outs = [_EMPTY if i in self.bound else torch.empty(s, dtype=d)
                for i, (s, d) in enumerate(self.outputs)]
        tensors = xs + self.state + self.consts + self.temps + outs
        ptrs = None
        for (fn, idx), vendor, off in zip(self.calls, self.vendor, self.offsets, strict=True):
            if vendor:
                tensors[idx] = fn(tensors)
                ptrs = None
                continue
            if ptrs is None:
                ptrs = [t.data_ptr() for t in tensors]
            if off is None:
                fn(*[ptrs[i] for i in idx])
            else:
                fn(*_offset_pointers(ptrs, idx, off))
        outs = tensors[len(tensors) - len(self.outputs):]
        return outs[0] if self.single else tuple(outs)


_EMPTY = torch.empty(0)


def _bound_outputs(plan: dict[str, Any], slot: dict[str, int], first: int) -> set[int]:
    """Output positions a vendor step writes before any kernel touches them: the library's
    result is returned as that output (no allocation, no copy)."""
    bound: set[int] = set()
    touched: set[str] = set()
    outs = [n for n, _, _ in plan["outputs"]]
    for s in plan["steps"]:
        if "vendor" in s:
            name = s["out"][0]
            if name in outs and name not in touched and slot[name] >= first:
                bound.add(slot[name] - first)
            touched.add(name)
        else:
            touched |= set(s["args"])
    return bound


def _offset_pointers(ptrs: list[int], idx: list[int], offsets: list[int]) -> list[int]:
    """A kernel's argument pointers, each moved by its step's byte offset."""
    return [ptrs[i] + o for i, o in zip(idx, offsets, strict=True)]
