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
admits ``vendor_library``) and random fills (module initialisers). :func:`refuse_native_reach`
narrows the native route (imports and ``ctypes`` look-ups of the framework, the Python C API,
vendor libraries). Plain-torch, C++ and SYCL candidates run with no numeric package
importable (:mod:`kernelwright.tools.no_numeric`). Not covered, by design of a same-process
runner: numpy on CUDA (CuPy and the emulator import it), and native code that finds a function
by reading memory; see docs/SECURITY.md.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterable

import torch

from kernelwright.errors import FrameworkOperatorError
from kernelwright.tools.backends.native_imports import MARKER

BACKEND_KEYS = ("CPU", "QuantizedCPU", "SparseCPU", "SparseCsrCPU", "MkldnnCPU",
                "NestedTensorCPU")
COMPOSITE_KEYS = ("CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional")
# random fills: what nn.Module initialisers call; they read no input
RANDOM_FILL_OPS = frozenset({"uniform_", "normal_", "random_", "bernoulli_", "exponential_",
                             "cauchy_", "log_normal_", "geometric_", "randn", "rand",
                             "randint", "randperm", "normal", "rand_like", "randn_like"})
FREE_NAMESPACES = frozenset({"profiler"})  # record_function markers compute nothing


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


def refuse_native_reach(loadable: Iterable[str]) -> None:
    """For the rest of this process: ``ctypes`` opens libraries only inside ``loadable``
    folders (the runner's scratch and build cache: the candidate's own kernels and the
    backends' shim), never the process itself (``CDLL(None)``), libtorch or a BLAS, and looks
    up no symbol :mod:`native_imports` refuses (the framework, the Python C API, vendor
    libraries, run-time loading); C++ libraries importing those are not loaded either."""
    import os
    import sys

    from kernelwright.tools.backends import native_imports

    roots = tuple(os.path.realpath(r) for r in loadable)
    native_imports.refuse_outside_compute()

    def inside(name: object) -> bool:
        if not isinstance(name, str | bytes | os.PathLike):
            return False
        real = os.path.realpath(os.fsdecode(name))
        return any(real == r or real.startswith(r + os.sep) for r in roots)

    def hook(event: str, args: tuple) -> None:
        if event == "ctypes.dlopen" and not inside(args[0]):
            raise PermissionError(f"ctypes.CDLL({args[0]!r}) {MARKER}: load only the "
                                  "libraries your own kernels built")
        if event in ("ctypes.dlsym", "ctypes.dlsym/handle"):
            refused = native_imports.refused_imports([str(args[1])])
            if refused:
                raise PermissionError(f"looking up {args[1]} ({refused[str(args[1])]}) "
                                      f"{MARKER}")

    sys.addaudithook(hook)
