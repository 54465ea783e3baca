"""GPU simulation without a GPU: a PTX emulator, Accel-Sim traces, and a timing model."""

from kernelwright.tools.gpusim._trace import TraceSampling
from kernelwright.tools.gpusim.emulator import LaunchStats
from kernelwright.tools.gpusim.launch import launch

__all__ = ["LaunchStats", "TraceSampling", "launch"]
