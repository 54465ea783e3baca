"""GPU configurations for the reference timing model, from public specifications.

Structural numbers (SMs, schedulers, warps/threads/CTAs/registers/shared memory per SM, L2 size,
DRAM bandwidth, boost clock, execution-unit lanes) come from NVIDIA's architecture whitepapers and
product pages. Latencies are rounded figures from published microbenchmark studies (Jia et al.,
"Dissecting the NVIDIA Turing T4 GPU via Microbenchmarking", 2019; Luo et al., "Benchmarking and
Dissecting the Nvidia Hopper GPU Architecture", 2024) and are approximate. L2 bandwidth is an
estimate (about 2-3x DRAM). Every figure is for the reference model, not a vendor guarantee.

Example:
    >>> gpu = gpu_by_name("rtx2080ti")
    >>> gpu.scaled(cache=2.0).l2_bytes == 2 * gpu.l2_bytes
    True
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

KIB = 1024
MIB = 1024 * 1024


class GPUConfig(BaseModel):
    """One GPU as the timing model sees it (all sizes in bytes, latencies in core cycles)."""

    model_config = ConfigDict(frozen=True)

    name: str
    arch: str
    num_sms: int = Field(gt=0)
    schedulers_per_sm: int = 4
    max_warps_per_sm: int
    max_threads_per_sm: int
    max_ctas_per_sm: int
    max_threads_per_cta: int = 1024
    registers_per_sm: int = 65536
    register_alloc_unit: int = 256  # registers, allocated per warp
    max_registers_per_thread: int = 255
    shared_bytes_per_sm: int
    shared_alloc_unit: int = 256
    l1_bytes: int  # L1 data cache when shared memory takes its largest carve-out
    unified_l1_bytes: int = 0  # L1 + shared capacity; unused shared memory becomes L1
    l1_assoc: int = 4
    l2_bytes: int
    l2_assoc: int = 16
    line_bytes: int = 128
    sector_bytes: int = 32
    dram_gbs: float
    l2_gbs: float
    clock_mhz: float
    # execution lanes per SM (a warp instruction occupies its unit for 32*schedulers/lanes cycles)
    fp32_lanes_per_sm: int = 64
    int32_lanes_per_sm: int = 64
    fp64_lanes_per_sm: int = 2
    sfu_lanes_per_sm: int = 16
    tensor_interval: int = 8  # cycles a scheduler's tensor unit is busy per warp mma
    # latencies (cycles)
    alu_latency: int = 4
    fp64_latency: int = 48
    sfu_latency: int = 20
    tensor_latency: int = 32
    branch_latency: int = 6
    shared_latency: int = 24
    const_latency: int = 8
    l1_latency: int = 32
    l2_latency: int = 190
    dram_latency: int = 320
    atomic_latency: int = 40  # on top of the L2 round trip
    barrier_latency: int = 20
    lsu_lines_per_cycle: float = 1.0  # 128-byte L1 tag lookups per cycle per SM

    @property
    def dram_bytes_per_cycle(self) -> float:
        """DRAM bandwidth shared by all SMs, in bytes per core cycle."""
        return self.dram_gbs * 1e9 / (self.clock_mhz * 1e6)

    @property
    def l2_bytes_per_cycle(self) -> float:
        """L2 bandwidth shared by all SMs, in bytes per core cycle."""
        return self.l2_gbs * 1e9 / (self.clock_mhz * 1e6)

    def l1_bytes_for(self, shared_per_sm: int) -> int:
        """L1 capacity when resident CTAs use ``shared_per_sm`` bytes of shared memory."""
        return max(self.l1_bytes, self.unified_l1_bytes - shared_per_sm)

    def issue_interval(self, lanes_per_sm: int) -> int:
        """Cycles one scheduler's unit is busy per warp instruction with ``lanes_per_sm``."""
        return max(1, math.ceil(32 * self.schedulers_per_sm / max(lanes_per_sm, 1)))

    def scaled(
        self, *, cache: float = 1.0, sms: float = 1.0, dram: float = 1.0, name: str | None = None
    ) -> GPUConfig:
        """A variant for robustness experiments.

        Args:
            cache: factor on L1 and L2 capacity (e.g. 2.0 or 0.5).
            sms: factor on the SM count (DRAM and L2 bandwidth stay unless ``dram`` changes).
            dram: factor on DRAM bandwidth.
            name: new name; by default the factors are appended to the current one.
        """
        parts = [f"{k}x{v:g}" for k, v in (("cache", cache), ("sms", sms), ("dram", dram))
                 if v != 1.0]
        return self.model_copy(update={
            "name": name or "-".join([self.name, *parts]),
            "l1_bytes": max(self.line_bytes * self.l1_assoc, round(self.l1_bytes * cache)),
            "unified_l1_bytes": round(self.unified_l1_bytes * cache),
            "l2_bytes": max(self.line_bytes * self.l2_assoc, round(self.l2_bytes * cache)),
            "num_sms": max(1, round(self.num_sms * sms)),
            "dram_gbs": self.dram_gbs * dram,
        })


TURING_RTX2080TI = GPUConfig(
    name="rtx2080ti", arch="turing", num_sms=68, max_warps_per_sm=32, max_threads_per_sm=1024,
    max_ctas_per_sm=16, shared_bytes_per_sm=64 * KIB, l1_bytes=32 * KIB, l2_bytes=5632 * KIB,
    unified_l1_bytes=96 * KIB,
    dram_gbs=616.0, l2_gbs=1700.0, clock_mhz=1545.0, fp32_lanes_per_sm=64, int32_lanes_per_sm=64,
    fp64_lanes_per_sm=2, sfu_lanes_per_sm=16, tensor_interval=8, shared_latency=19,
    l1_latency=32, l2_latency=188, dram_latency=300, fp64_latency=48,
)
AMPERE_RTX3080TI = GPUConfig(
    name="rtx3080ti", arch="ampere", num_sms=80, max_warps_per_sm=48, max_threads_per_sm=1536,
    max_ctas_per_sm=16, shared_bytes_per_sm=100 * KIB, l1_bytes=28 * KIB, l2_bytes=6 * MIB,
    unified_l1_bytes=128 * KIB,
    dram_gbs=912.0, l2_gbs=2300.0, clock_mhz=1665.0, fp32_lanes_per_sm=128,
    int32_lanes_per_sm=64, fp64_lanes_per_sm=2, sfu_lanes_per_sm=16, tensor_interval=8,
    shared_latency=23, l1_latency=33, l2_latency=200, dram_latency=350, fp64_latency=48,
)
AMPERE_A100 = GPUConfig(
    name="a100", arch="ampere", num_sms=108, max_warps_per_sm=64, max_threads_per_sm=2048,
    max_ctas_per_sm=32, shared_bytes_per_sm=164 * KIB, l1_bytes=28 * KIB, l2_bytes=40 * MIB,
    unified_l1_bytes=192 * KIB,
    dram_gbs=1555.0, l2_gbs=4000.0, clock_mhz=1410.0, fp32_lanes_per_sm=64,
    int32_lanes_per_sm=64, fp64_lanes_per_sm=32, sfu_lanes_per_sm=16, tensor_interval=4,
    shared_latency=23, l1_latency=33, l2_latency=200, dram_latency=400, fp64_latency=8,
)
ADA_RTX4090 = GPUConfig(
    name="rtx4090", arch="ada", num_sms=128, max_warps_per_sm=48, max_threads_per_sm=1536,
    max_ctas_per_sm=24, shared_bytes_per_sm=100 * KIB, l1_bytes=28 * KIB, l2_bytes=72 * MIB,
    unified_l1_bytes=128 * KIB,
    dram_gbs=1008.0, l2_gbs=3500.0, clock_mhz=2520.0, fp32_lanes_per_sm=128,
    int32_lanes_per_sm=64, fp64_lanes_per_sm=2, sfu_lanes_per_sm=16, tensor_interval=4,
    shared_latency=23, l1_latency=33, l2_latency=270, dram_latency=500, fp64_latency=48,
)
HOPPER_H100 = GPUConfig(
    name="h100", arch="hopper", num_sms=132, max_warps_per_sm=64, max_threads_per_sm=2048,
    max_ctas_per_sm=32, shared_bytes_per_sm=228 * KIB, l1_bytes=28 * KIB, l2_bytes=50 * MIB,
    unified_l1_bytes=256 * KIB,
    dram_gbs=3350.0, l2_gbs=7000.0, clock_mhz=1980.0, fp32_lanes_per_sm=128,
    int32_lanes_per_sm=64, fp64_lanes_per_sm=64, sfu_lanes_per_sm=16, tensor_interval=2,
    shared_latency=23, l1_latency=33, l2_latency=260, dram_latency=480, fp64_latency=8,
)

GPUS: dict[str, GPUConfig] = {
    g.name: g for g in (TURING_RTX2080TI, AMPERE_RTX3080TI, AMPERE_A100, ADA_RTX4090, HOPPER_H100)
}
_ALIASES = {"turing": "rtx2080ti", "ampere": "rtx3080ti", "ada": "rtx4090", "hopper": "h100"}


def gpu_by_name(name: str | GPUConfig) -> GPUConfig:
    """Resolve a GPU name (or architecture alias) to its configuration.

    Raises:
        ValueError: unknown name; the message lists the choices.
    """
    if isinstance(name, GPUConfig):
        return name
    key = name.strip().lower().replace("-", "").replace("_", "").replace(" ", "")
    key = _ALIASES.get(key, key)
    if key not in GPUS:
        choices = ", ".join([*GPUS, *_ALIASES])
        raise ValueError(f"unknown GPU {name!r}; choose one of: {choices}")
    return GPUS[key]
