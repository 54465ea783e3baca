"""Kernel backends: a registry of name -> implementation, imported lazily."""

from __future__ import annotations

from kernelwright.tools.backends.base import (
    Backend,
    BackendStatus,
    BuildResult,
    Kernel,
    KernelModule,
    KernelStats,
)
from kernelwright.tools.backends.registry import (
    BACKENDS,
    BackendRegistry,
    activate,
    active_registry,
)

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendRegistry",
    "BackendStatus",
    "BuildResult",
    "Kernel",
    "KernelModule",
    "KernelStats",
    "activate",
    "active_registry",
]
