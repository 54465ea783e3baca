"""The coarse shapes of work the planner and the knowledge base distinguish."""

from __future__ import annotations

from enum import StrEnum


class OperatorClass(StrEnum):
    """The coarse shapes of work the planner distinguishes."""

    ELEMENTWISE = "elementwise"
    ROWWISE_NORM = "rowwise_norm"
    REDUCTION = "reduction"
    LAYOUT = "layout"
    GEMM = "gemm"
    OTHER = "other"


class ImplementationSpace(StrEnum):
    """Where an implementation may live (HIERA's implementation spaces)."""

    FRAMEWORK = "framework"  # fused torch operators, torch.compile
    VENDOR_LIBRARY = "vendor_library"  # oneDNN / MKL / cuBLAS through their APIs
    CUSTOM_KERNEL = "custom_kernel"  # hand-written SYCL, CUDA or C++ kernels
