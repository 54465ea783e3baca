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
from kernelwright.tools.lower.backends import codegen_for
from kernelwright.tools.lower.launch_config import launch_plans

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
        # the kernel block's KW_LOCAL_* defines set the work-group sizes (launch_config.py)
        self.plans = launch_plans(self.source, self.plans)
        self._kernels = _load(self.backend, self.source, tuple(self.options))
        self._launch = _launcher(self.backend, self._kernels)
        self._runners: dict[tuple, Any] = {}

    def _state_tensor(self, name: str) -> torch.Tensor:
        holder, leaf = _holder(self, name)
        t = getattr(holder, leaf)
        return t if t.is_contiguous() else t.contiguous()

    def _const(self, name: str, device: torch.device) -> torch.Tensor:
        """A folded constant on ``device`` (moved once, then kept there)."""
        value = self._consts[name]
        if value.device != device:
            value = self._consts[name] = value.to(device)
        return value

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
        prepared = codegen_for(self.backend).prepared(self, plan)
        if prepared is not None:
            return prepared
        return lambda owner, xs: owner._run(plan, xs)

    def _run(self, plan: dict[str, Any], inputs: tuple[Any, ...]) -> Any:
        t: dict[str, torch.Tensor] = {}
        for name, x in zip(plan["inputs"], inputs, strict=True):
            if name is not None:
                t[name] = x if x.is_contiguous() else x.contiguous()
        for name, target in plan["state"]:
            t[name] = self._state_tensor(target)
        device = _device_of(inputs)  # a CUDA module run on a GPU gets CUDA tensors
        for name, target in plan["consts"]:
            t[name] = self._const(target, device)
        for name, (shape, dtype) in plan["temps"].items():
            t[name] = torch.empty(shape, dtype=dtype_of(dtype), device=device)
        for name, shape, dtype in plan["outputs"]:
            if name not in t:
                t[name] = torch.empty(shape, dtype=dtype_of(dtype), device=device)
        self._launch(plan["steps"], t)  # a vendor step binds its result in t
        outs = [t[name] for name, _, _ in plan["outputs"]]
        return outs[0] if plan["single"] else tuple(outs)


def _device_of(inputs: tuple[Any, ...]) -> torch.device:
    """Where the first tensor input lives (intermediates and outputs are made there)."""
    return next((x.device for x in inputs if isinstance(x, torch.Tensor)), torch.device("cpu"))


def _signature(training: bool, inputs: tuple[Any, ...]) -> str:
    shapes = ";".join(",".join(map(str, x.shape)) if isinstance(x, torch.Tensor) else "-"
                      for x in inputs)
    return f"{'train' if training else 'eval'}|{shapes}"


def _load(backend: str, source: str, options: tuple[str, ...] = ()) -> Any:
    from kernelwright.tools.backends import active_registry

    return active_registry().get(backend).load_inline(source, options=options)


def _launcher(backend: str, kernels: Any):
    from kernelwright.tools.backends import active_registry

    return codegen_for(backend).launcher(kernels, active_registry().get(backend))


def _vendor(step: dict[str, Any], t: dict[str, torch.Tensor]) -> None:
    from kernelwright.tools.lower.vendor import run_vendor

    run_vendor(step, t)
