"""GPU simulation without a GPU: a PTX emulator, Accel-Sim traces, and a timing model."""

from kernelwright.tools.gpusim._trace import TraceSampling
from kernelwright.tools.gpusim.address_space import AddressSpace
from kernelwright.tools.gpusim.emulator import LaunchStats
from kernelwright.tools.gpusim.gpus import GPUConfig, gpu_by_name
from kernelwright.tools.gpusim.launch import launch
from kernelwright.tools.gpusim.timing import (
    KernelTiming,
    L2State,
    simulate_kernel,
    simulate_kernels,
    simulate_trace_dir,
)
from kernelwright.tools.gpusim.traces import TraceDirWriter, read_trace_dir

__all__ = [
    "AddressSpace",
    "GPUConfig",
    "KernelTiming",
    "L2State",
    "LaunchStats",
    "TraceDirWriter",
    "TraceSampling",
    "gpu_by_name",
    "launch",
    "read_trace_dir",
    "simulate_kernel",
    "simulate_kernels",
    "simulate_trace_dir",
]
