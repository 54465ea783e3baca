"""Kernel backends: a registry of name -> implementation, imported lazily."""

from __future__ import annotations

import importlib
from functools import cache

from kernelwright.tools.backends.base import (
    Backend,
    BackendStatus,
    BuildResult,
    Kernel,
    KernelModule,
    KernelStats,
)

BACKENDS: dict[str, str] = {
    "sycl": "kernelwright.tools.backends.sycl:SyclBackend",
    "cpp": "kernelwright.tools.backends.cpp:CppBackend",
    "cuda": "kernelwright.tools.backends.cuda:CudaBackend",
}


@cache
def get_backend(name: str) -> Backend:
    """The process-wide backend called ``name``; unknown names list the choices."""
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; choose one of: {', '.join(BACKENDS)}")
    module, cls = BACKENDS[name].split(":")
    return getattr(importlib.import_module(module), cls)()


__all__ = [
    "BACKENDS",
    "Backend",
    "BackendStatus",
    "BuildResult",
    "Kernel",
    "KernelModule",
    "KernelStats",
    "get_backend",
]
