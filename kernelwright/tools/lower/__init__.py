"""Lowering: PyTorch reference -> torch.export -> IR -> fusion groups -> SYCL / C++ / CUDA."""

from kernelwright.tools.lower.program import LoweredProgram, lower_task

__all__ = ["LoweredProgram", "lower_task"]
