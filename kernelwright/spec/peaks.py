"""A device's roofs: measured memory bandwidth and arithmetic rate (one type for every user)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class MachinePeaks(BaseModel):
    """Peak memory bandwidth (GB/s, read + write) and fp32 arithmetic rate (GFLOP/s) of a device.

    Example:
        >>> MachinePeaks(machine="cpu", bandwidth_gbps=100.0, gflops=1000.0).ridge
        10.0
    """

    model_config = ConfigDict(frozen=True)
    machine: str = "unknown"
    bandwidth_gbps: float
    gflops: float
    threads: int = 1

    @property
    def ridge(self) -> float:
        """Arithmetic intensity (FLOP/byte) where the two roofs meet."""
        return self.gflops / self.bandwidth_gbps
