"""A device's roofs: measured memory bandwidth and arithmetic rate (one type for every user)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class MachinePeaks(BaseModel):
    """Peak memory bandwidth (GB/s, read + write) and fp32 arithmetic rate (GFLOP/s) of a device.

    ``key`` names what the figures are valid for (CPU model, core count, threads, runtime); the
    other optional fields say how and when they were measured.

    Example:
        >>> MachinePeaks(machine="cpu", bandwidth_gbps=100.0, gflops=1000.0).ridge
        10.0
    """

    model_config = ConfigDict(frozen=True)
    machine: str = "unknown"
    bandwidth_gbps: float
    gflops: float
    threads: int = 1
    key: dict[str, str] = Field(default_factory=dict)
    triad_gbps: float | None = None  # STREAM triad a = b + s*c (3 arrays of 4-byte floats)
    copy_gbps: float | None = None  # a = b (2 arrays)
    sgemm_gflops: float | None = None  # the vendor SGEMM torch calls (MKL / oneDNN / OpenBLAS)
    method: str = ""
    measured_at: float | None = None  # epoch seconds

    @property
    def ridge(self) -> float:
        """Arithmetic intensity (FLOP/byte) where the two roofs meet."""
        return self.gflops / self.bandwidth_gbps
