"""Our own CUDA workloads (Rodinia/PolyBench/LLM-decode shapes) replayed on the PTX emulator."""

from kernelwright.tools.gpusim.workloads._registry import WORKLOADS, get_workload
from kernelwright.tools.gpusim.workloads.base import Workload, WorkloadRun

__all__ = ["WORKLOADS", "Workload", "WorkloadRun", "get_workload"]
