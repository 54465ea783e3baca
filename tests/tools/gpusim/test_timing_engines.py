"""The compiled engine (numba) gives exactly the reference engine's results.

Every counter and the cycle count must match on the real-syntax fixtures and on synthetic
kernels that exercise each instruction class, both scheduling policies, a warm L2 and an L2 too
small for the working set (evictions of dirty lines).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.tools.gpusim._synthetic import (
    FULL,
    alu,
    bar,
    exit_,
    ld_global,
    ld_shared,
    st_global,
    st_shared,
    synthetic_kernel,
)
from kernelwright.tools.gpusim.gpus import gpu_by_name
from kernelwright.tools.gpusim.records import TraceInstruction
from kernelwright.tools.gpusim.timing import engine_kind, simulate_kernel, simulate_kernels
from kernelwright.tools.gpusim.traces import iter_kernels

FIXTURES = Path(__file__).parents[2] / "fixtures" / "traces"
GPU = gpu_by_name("rtx2080ti")
TINY_L2 = GPU.model_copy(update={"l2_bytes": 16 * 1024, "num_sms": 4})


def _same(kernel, gpu=GPU, policy="gto") -> None:
    ref = simulate_kernel(kernel, gpu, policy, engine="reference")
    fast = simulate_kernel(kernel, gpu, policy, engine="compiled")
    assert fast.model_copy(update={"model_seconds": 0}) == ref.model_copy(
        update={"model_seconds": 0})


@pytest.mark.parametrize("folder", ["v3_grouped", "v4_raw", "v5_grouped", "v5_clusters_grouped",
                                    "v5_clusters_raw"])
@pytest.mark.parametrize("policy", ["gto", "lrr"])
def test_fixtures_give_the_same_cycles_and_counters(folder: str, policy: str):
    for kernel in iter_kernels(FIXTURES / folder):
        _same(kernel, policy=policy)


def _every_class(cta: int, warp: int) -> list[TraceInstruction]:
    base = 0x7F0000000000 + (cta * 4 + warp) * 4096
    half = 0x0000FFFF
    return [
        ld_global(0x00, "R4", base, 4),
        ld_global(0x10, "R5", base + 8192 * 64, 128, width=16),  # strided, 4 lines per lane
        TraceInstruction(0x20, FULL, "LDC", ("R6",), ("R1",), 4, (0x40,) * 32),
        alu(0x30, "R7", ("R4", "R5", "R6")),
        alu(0x40, "R8", ("R7",), op="DFMA"),
        alu(0x50, "R9", ("R8",), op="MUFU.RSQ"),
        alu(0x60, "R10", ("R9",), op="HMMA.16816.F32"),
        st_shared(0x70, "R7", warp * 128, 4),
        bar(0x80),
        ld_shared(0x90, "R11", 0, 128),  # 32-way bank conflict
        ld_shared(0x94, "R17", 0, 16, width=16),  # 128-bit lanes: at least 4 wavefronts
        st_shared(0x98, "R17", 2, 2, width=2, mask=0x00FF00FF),  # 16-bit, broadcast words
        TraceInstruction(0xA0, FULL, "ATOMS.ADD", ("R12",), ("R3",), 4, (0,) * 32),
        TraceInstruction(0xB0, FULL, "SHFL.BFLY", ("R13",), ("R11",), 4, tuple(range(32))),
        TraceInstruction(0xC0, FULL, "LDGSTS.E", (), ("R2",), 4,
                         tuple(base + 65536 + 4 * i for i in range(32))),
        TraceInstruction(0xD0, FULL, "LDGDEPBAR", (), ()),
        TraceInstruction(0xE0, FULL, "DEPBAR.LE", (), ()),
        TraceInstruction(0xF0, FULL, "RED.E.ADD", (), ("R2", "R13"), 4, (base,) * 32),
        TraceInstruction(0x100, FULL, "ATOMG.E.ADD", ("R14",), ("R2",), 4,
                         tuple(base + 4 * i for i in range(32))),
        TraceInstruction(0x110, FULL, "STL", (), ("R1", "R14"), 4,
                         tuple(0xFF0000 + 4 * i for i in range(32))),
        TraceInstruction(0x120, FULL, "LDL", ("R15",), ("R1",), 4,
                         tuple(0xFF0000 + 4 * i for i in range(32))),
        TraceInstruction(0x130, 0, "EXIT"),
        TraceInstruction(0x140, 0, "BRA"),
        TraceInstruction(0x150, FULL, "MEMBAR.GPU"),
        TraceInstruction(0x160, FULL ^ half, "EXIT"),
        st_global(0x170, "R15", base + 128, 4, mask=half),
        exit_(0x180) if warp % 2 else TraceInstruction(0x180, half, "EXIT"),
        alu(0x190, "R16", ("R15",)),  # after the last lane retired: never simulated
    ]


@pytest.mark.parametrize("policy", ["gto", "lrr"])
def test_every_instruction_class_gives_the_same_results(policy: str):
    kernel = synthetic_kernel(ctas=40, warps_per_cta=4, body=_every_class, shmem=4096)
    _same(kernel, policy=policy)
    _same(kernel, TINY_L2, policy)  # dirty evictions, L2 and DRAM queues under pressure


def test_empty_blocks_and_warps_give_the_same_results():
    def body(cta: int, warp: int) -> list[TraceInstruction]:
        if cta % 3 == 0 or warp == 1:
            return []
        return [ld_global(0, "R4", 0x7F0000000000 + cta * 512, 4), alu(0x10, "R5", ("R4",))]

    _same(synthetic_kernel(ctas=30, warps_per_cta=3, body=body))


def test_warm_l2_sequences_give_the_same_results():
    kernels = list(iter_kernels(FIXTURES / "v5_clusters_grouped")) * 2
    ref = simulate_kernels(kernels, GPU, warm_l2=True, engine="reference")
    fast = simulate_kernels(kernels, GPU, warm_l2=True, engine="compiled")
    strip = [t.model_copy(update={"model_seconds": 0}) for t in ref]
    assert [t.model_copy(update={"model_seconds": 0}) for t in fast] == strip
    assert fast[3].l2_hit_rate == 1.0


def test_engine_names():
    assert engine_kind("auto") == "compiled" and engine_kind("reference") == "reference"
    with pytest.raises(ValueError, match="choose from"):
        engine_kind("fast")
