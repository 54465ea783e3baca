"""GPU simulation without a GPU: a PTX emulator, Accel-Sim traces, and a timing model."""

from kernelwright.tools.gpusim._trace import TraceSampling
from kernelwright.tools.gpusim.emulator import LaunchStats
from kernelwright.tools.gpusim.gpus import GPUConfig, gpu_by_name
from kernelwright.tools.gpusim.launch import launch
from kernelwright.tools.gpusim.timing import KernelTiming, simulate_kernel, simulate_trace_dir
from kernelwright.tools.gpusim.traces import TraceDirWriter, read_trace_dir

__all__ = [
    "GPUConfig",
    "KernelTiming",
    "LaunchStats",
    "TraceDirWriter",
    "TraceSampling",
    "gpu_by_name",
    "launch",
    "read_trace_dir",
    "simulate_kernel",
    "simulate_trace_dir",
]
