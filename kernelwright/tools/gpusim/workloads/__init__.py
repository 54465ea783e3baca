"""Our own CUDA workloads (Rodinia/PolyBench/LLM-decode shapes) replayed on the PTX emulator."""

from kernelwright.tools.gpusim.workloads._registry import WORKLOADS, get_workload
from kernelwright.tools.gpusim.workloads.base import Workload, WorkloadRun
from kernelwright.tools.gpusim.workloads.cache import (
    gpusim_source_digest,
    traced_workload,
    workload_meta,
)
from kernelwright.tools.gpusim.workloads.suite import (
    SAMPLING_SUITE,
    SMALL_SUITE,
    SUITE_SAMPLING,
    SuiteEntry,
)

__all__ = [
    "SAMPLING_SUITE",
    "SMALL_SUITE",
    "SUITE_SAMPLING",
    "WORKLOADS",
    "SuiteEntry",
    "Workload",
    "WorkloadRun",
    "get_workload",
    "gpusim_source_digest",
    "traced_workload",
    "workload_meta",
]
