"""Packed, cache-blocked GEMM with explicit-SIMD micro-kernels, as C++ text for the lowering."""

from kernelwright.tools.lower.microkernels.isa import ISAS, Isa, detect_isa, isa_named
from kernelwright.tools.lower.microkernels.packed_gemm import (
    Blocking,
    GemmProblem,
    default_blocking,
    gemm_source,
)
from kernelwright.tools.lower.microkernels.strided import strided_gemm_source

__all__ = ["ISAS", "Blocking", "GemmProblem", "Isa", "default_blocking", "detect_isa",
           "gemm_source", "isa_named", "strided_gemm_source"]
