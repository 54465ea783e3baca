"""Backend-neutral kernel bodies, one module per job.

Every kernel is a set of *units* of work: elements (pointwise), rows (row groups, scans),
register tiles (GEMM, convolution). ``common`` has what every body shares (the emitted
kernel, index variables, epilogue writes), ``pointwise`` elements and scans, ``rows`` row
groups, ``anchor`` GEMM and convolution tiles. Which body a kernel gets, its wrapper and its
launch shape are decided by the backend's codegen class (``backends/``).
"""

from kernelwright.tools.lower.emit.common import KernelSource

__all__ = ["KernelSource"]
