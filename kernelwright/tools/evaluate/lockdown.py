"""Framework compute made unavailable in a candidate's process (a custom-kernels-only contract).

A dispatch mode that records operators lives inside the candidate's process and can be
popped, disabled or sidestepped from another thread. Instead, before a custom-only candidate
is imported, every computing operator of every namespace (aten, prims, quantized, mkldnn,
onednn, ...) gets a kernel that raises, registered with the dispatcher for the CPU backend
keys (dense, quantized, sparse, mkldnn, nested). The dispatcher's table is process-wide: no
thread, dispatch mode, ``_DisableTorchDispatch`` or redispatch reaches the original kernel,
and torch.fft, torch.linalg and ``torch.ops.<any namespace>`` all end in a blocked kernel.

The registrations' handles are leaked on purpose (one extra reference each, no Python name
holds them), so candidate code finds nothing to ``reset()``; the audit hook of
:mod:`kernelwright.tools.evaluate.audit` refuses the ``gc`` walks that could find them.

What stays allowed: operators that allocate, fill, copy, convert or re-view memory
(:data:`verify.NON_COMPUTE_OPS`, plus the vendor GEMM/convolution entries when the contract
admits ``vendor_library``) and random fills (module initialisers). Not covered, by design of
a same-process runner: native code (the candidate's own kernels, ``ctypes``) and numpy; see
docs/SECURITY.md.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterable

import torch

from kernelwright.errors import FrameworkOperatorError

BACKEND_KEYS = ("CPU", "QuantizedCPU", "SparseCPU", "SparseCsrCPU", "MkldnnCPU",
                "NestedTensorCPU")
COMPOSITE_KEYS = ("CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional")
# random fills: what nn.Module initialisers call; they read no input
RANDOM_FILL_OPS = frozenset({"uniform_", "normal_", "random_", "bernoulli_", "exponential_",
                             "cauchy_", "log_normal_", "geometric_", "randn", "rand",
                             "randint", "randperm", "normal", "rand_like", "randn_like"})
FREE_NAMESPACES = frozenset({"profiler"})  # record_function markers compute nothing
MARKER = "is not available: this task's contract allows custom kernels only"


_done: list[frozenset[str]] = []


def lock(allowed: Iterable[str]) -> int:
    """Block every computing operator outside ``allowed`` (overload-packet names, any
    namespace) in this process, for good; the number of registrations. Idempotent for the
    same set."""
    allowed = frozenset(allowed) | RANDOM_FILL_OPS
    if _done:
        if _done[0] != allowed:
            raise RuntimeError("the framework lockdown is already in place with another "
                               "allow-list")
        return 0
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    modules: dict[str, object] = {}
    count = 0
    for name in torch._C._dispatch_get_all_op_names():
        ns, _, rest = name.partition("::")
        if ns in FREE_NAMESPACES or rest.split(".")[0] in allowed:
            continue
        composite = any(has(name, k) for k in COMPOSITE_KEYS)
        keys = [k for k in BACKEND_KEYS if has(name, k) or (composite and k == "CPU")]
        if not keys:
            continue
        module = modules.get(ns)
        if module is None:
            module = modules[ns] = torch._C._dispatch_library("IMPL", ns, "", "", 0)
        for key in keys:
            module.impl(rest, key, _refusal(name), False)
            count += 1
    for module in modules.values():  # leaked: no name holds them, nothing can reset them
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(module))
    modules.clear()
    _done.append(allowed)
    return count


def _refusal(name: str):
    def refuse(*args, **kwargs):
        raise FrameworkOperatorError(f"framework operator {name} {MARKER}; compute it in "
                                     "your own kernel")

    return refuse


INTROSPECTION_EVENTS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents"})


def refuse_introspection() -> None:
    """Refuse, for the rest of this process, the ``gc`` walks that reach objects no name
    holds (the leaked registrations). An audit hook cannot be removed from Python."""
    import sys

    def hook(event: str, args: tuple) -> None:
        if event in INTROSPECTION_EVENTS:
            raise RuntimeError(f"{event} is not available to a candidate: this task's "
                               "contract allows custom kernels only")

    sys.addaudithook(hook)
