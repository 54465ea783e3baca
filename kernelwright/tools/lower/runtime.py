"""The runtime a lowered candidate module imports: weight holders and the launch plan.

A lowered candidate is plain data (kernel source, one plan per input-shape signature, the
reference's state_dict layout); :class:`LoweredModule` turns it into an ``nn.Module`` whose
``state_dict`` has the reference's keys (so the harness's weights load into it) and whose
``forward`` allocates outputs and intermediates and launches the plan's kernels in order on
one in-order queue, waiting once at the end.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import torch
from torch import nn

from kernelwright.errors import LaunchError
from kernelwright.tools.lower.vendor_run import prepare as prepare_vendor

_DTYPES = {str(d).removeprefix("torch."): d for d in (
    torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
    torch.int16, torch.int8, torch.uint8, torch.bool)}


def dtype_of(name: str) -> torch.dtype:
    return _DTYPES[name]


def decode_tensor(text: str) -> torch.Tensor:
    return torch.load(io.BytesIO(base64.b64decode(text)), weights_only=True)


def encode_tensor(t: torch.Tensor) -> str:
    buf = io.BytesIO()
    torch.save(t.detach().clone().contiguous(), buf)
    return base64.b64encode(buf.getvalue()).decode()


def _holder(root: nn.Module, dotted: str) -> tuple[nn.Module, str]:
    *path, leaf = dotted.split(".")
    mod = root
    for part in path:
        if part not in mod._modules:
            mod.add_module(part, nn.Module())
        mod = mod._modules[part]
    return mod, leaf


class LoweredModule(nn.Module):
    """Base of lowered candidates; subclasses set ``backend``, ``source``, ``plans``,
    ``state`` (name -> [shape, dtype, is_parameter]) and ``consts`` (name -> encoded)."""

    backend: str = "sycl"
    launch: str = "chain"  # chain: one prepared submission per forward (SYCL); steps
    source: str = ""
    options: tuple[str, ...] = ()  # extra compiler options (C++: -fno-trapping-math)
    plans: dict[str, Any] = {}
    state: dict[str, Any] = {}
    consts: dict[str, str] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        for name, (shape, dtype, is_param) in self.state.items():
            holder, leaf = _holder(self, name)
            value = torch.zeros(shape, dtype=dtype_of(dtype))
            if is_param:
                holder.register_parameter(leaf, nn.Parameter(value, requires_grad=False))
            else:
                holder.register_buffer(leaf, value)
        self._consts = {k: decode_tensor(v).contiguous() for k, v in self.consts.items()}
        self._kernels = _load(self.backend, self.source, tuple(self.options))
        self._launch = _launcher(self.backend, self._kernels)
        self._runners: dict[tuple, Any] = {}

    def _state_tensor(self, name: str) -> torch.Tensor:
        holder, leaf = _holder(self, name)
        t = getattr(holder, leaf)
        return t if t.is_contiguous() else t.contiguous()

    def forward(self, *inputs: Any) -> Any:
        key = (self.training, *[tuple(x.shape) if isinstance(x, torch.Tensor) else None
                                for x in inputs])
        runner = self._runners.get(key)
        if runner is None:
            runner = self._runners[key] = self._runner_for(inputs)
        return runner(self, inputs)

    def _runner_for(self, inputs: tuple[Any, ...]):
        key = _signature(self.training, inputs)
        plan = self.plans.get(key) or self.plans.get(_signature(not self.training, inputs))
        if plan is None:
            raise LaunchError(
                f"no lowered program for input shapes {key}; this candidate was lowered for "
                f"{sorted(self.plans)}. Lower the task again with these shapes as a variant.")
        if self.launch == "chain" and self.backend == "sycl" and _zero_copy():
            return _Chain(self, plan)
        if self.backend == "cpp":
            return _CppChain(self, plan)
        return lambda owner, xs: owner._run(plan, xs)

    def _run(self, plan: dict[str, Any], inputs: tuple[Any, ...]) -> Any:
        t: dict[str, torch.Tensor] = {}
        for name, x in zip(plan["inputs"], inputs, strict=True):
            if name is not None:
                t[name] = x if x.is_contiguous() else x.contiguous()
        for name, target in plan["state"]:
            t[name] = self._state_tensor(target)
        for name, target in plan["consts"]:
            t[name] = self._consts[target]
        for name, (shape, dtype) in plan["temps"].items():
            t[name] = torch.empty(shape, dtype=dtype_of(dtype))
        for name, shape, dtype in plan["outputs"]:
            if name not in t:
                t[name] = torch.empty(shape, dtype=dtype_of(dtype))
        self._launch(plan["steps"], t)  # a vendor step binds its result in t
        outs = [t[name] for name, _, _ in plan["outputs"]]
        return outs[0] if plan["single"] else tuple(outs)


class _Chain:
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
        be = active_registry().get("sycl")
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


class _CppChain:
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
        for s in plan["steps"]:
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
            for fn, idx in self.calls:
                fn(*[ptrs[i] for i in idx])
            return outs[0] if self.single else tuple(outs)
        outs = [_EMPTY if i in self.bound else torch.empty(s, dtype=d)
                for i, (s, d) in enumerate(self.outputs)]
        tensors = xs + self.state + self.consts + self.temps + outs
        ptrs = None
        for (fn, idx), vendor in zip(self.calls, self.vendor, strict=True):
            if vendor:
                tensors[idx] = fn(tensors)
                ptrs = None
                continue
            if ptrs is None:
                ptrs = [t.data_ptr() for t in tensors]
            fn(*[ptrs[i] for i in idx])
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


def _zero_copy() -> bool:
    from kernelwright.tools.backends import active_registry

    return bool(active_registry().get("sycl").zero_copy)


def _signature(training: bool, inputs: tuple[Any, ...]) -> str:
    shapes = ";".join(",".join(map(str, x.shape)) if isinstance(x, torch.Tensor) else "-"
                      for x in inputs)
    return f"{'train' if training else 'eval'}|{shapes}"


def _load(backend: str, source: str, options: tuple[str, ...] = ()) -> Any:
    from kernelwright.tools.backends import active_registry

    return active_registry().get(backend).load_inline(source, options=options)


def _launcher(backend: str, kernels: Any):
    from kernelwright.tools.backends import active_registry

    be = active_registry().get(backend)

    def run_sycl(steps, t):
        for s in steps:
            if "vendor" in s:
                _vendor(s, t)
                continue
            kernels[s["kernel"]](*[t[a] for a in s["args"]], global_size=(s["global"],),
                                 local_size=(s["local"],), wait=False)
        be.synchronize()

    def run_cpp(steps, t):
        for s in steps:
            if "vendor" in s:
                _vendor(s, t)
                continue
            kernels[s["kernel"]](*[t[a] for a in s["args"]])

    def run_cuda(steps, t):
        for s in steps:
            if "vendor" in s:
                _vendor(s, t)
                continue
            grid = -(-s["global"] // s["local"])
            kernels[s["kernel"]](*[t[a] for a in s["args"]], grid=(grid,), block=(s["local"],))
        be.synchronize()

    return {"sycl": run_sycl, "cpp": run_cpp, "cuda": run_cuda}[backend]


def _vendor(step: dict[str, Any], t: dict[str, torch.Tensor]) -> None:
    from kernelwright.tools.lower.vendor import run_vendor

    run_vendor(step, t)
