"""Predicated-off instructions (mask 00000000) issue but do nothing; warps end at the last EXIT."""

from __future__ import annotations

from pathlib import Path

from kernelwright.tools.gpusim._synthetic import alu, bar, exit_, ld_global, synthetic_kernel
from kernelwright.tools.gpusim.gpus import gpu_by_name
from kernelwright.tools.gpusim.records import TraceInstruction
from kernelwright.tools.gpusim.timing import simulate_kernel, simulate_trace_dir
from kernelwright.tools.gpusim.traces import iter_kernels

FIXTURES = Path(__file__).parents[2] / "fixtures" / "traces"
GPU = gpu_by_name("rtx2080ti")


def test_vector_add_with_predicated_off_bounds_check_simulates_its_memory():
    """n = 100 over 4 warps: the @P0 EXIT is off in warps 0-2 and retires 28 lanes of warp 3."""
    for folder in ("v5_clusters_grouped", "v5_clusters_raw"):
        vadd = simulate_trace_dir(FIXTURES / folder)[0]
        assert vadd.warp_instructions == 4 * 11
        assert vadd.thread_instructions == 3 * 10 * 32 + (4 * 32 + 28 + 6 * 4)  # popcounts
        assert vadd.global_load_sectors == 2 * (3 * 4 + 1)  # 2 loads; 4 lanes = 1 sector
        assert vadd.global_store_sectors == 3 * 4 + 1
        assert vadd.dram_read_bytes == 32 * vadd.global_load_sectors
        assert vadd.cycles > GPU.dram_latency  # the loads are on the critical path


def _one_warp(body: list[TraceInstruction]):
    return synthetic_kernel(ctas=1, warps_per_cta=1, body=lambda c, w: body)


def test_predicated_off_exit_and_branch_do_not_end_the_warp():
    body = [TraceInstruction(0x10, 0, "EXIT"), TraceInstruction(0x20, 0, "BRA"),
            ld_global(0x30, "R4", 0x7F0000000000, 4), alu(0x40, "R5", ("R4",)), exit_(0x50)]
    t = simulate_kernel(_one_warp(body), GPU)
    assert t.warp_instructions == 5 and t.global_load_sectors == 4
    assert t.thread_instructions == 3 * 32


def test_predicated_off_memory_touches_nothing_and_writes_no_register():
    off_load = TraceInstruction(0x10, 0, "LDG.E.SYS", ("R4",), ("R2",), 4, ())
    body = [off_load, alu(0x20, "R5", ("R4",)), exit_(0x30)]
    t = simulate_kernel(_one_warp(body), GPU)
    assert t.global_load_sectors == 0 and t.dram_read_bytes == 0 and t.l1_hit_rate is None
    assert t.cycles < GPU.l1_latency  # the FFMA did not wait for a load that never happened


def test_predicated_off_instructions_cost_issue_slots():
    work = [alu(0x10 * i, f"R{4 + i % 8}", ("R2",)) for i in range(64)]
    off = [TraceInstruction(0x1000 + 0x10 * i, 0, "FFMA", ("R9",), ("R2",)) for i in range(64)]
    plain = simulate_kernel(_one_warp([*work, exit_(0x2000)]), GPU)
    padded = simulate_kernel(_one_warp([*work, *off, exit_(0x2000)]), GPU)
    assert padded.warp_instructions == plain.warp_instructions + 64
    assert padded.cycles >= plain.cycles + 64  # one issue slot each (the warp issues alone)
    assert padded.thread_instructions == plain.thread_instructions


def test_partial_exit_retires_lanes_and_the_rest_run_on():
    body = [TraceInstruction(0x10, 0xFFFF0000, "EXIT"),
            ld_global(0x20, "R4", 0x7F0000000000, 4, mask=0xFFFF),
            TraceInstruction(0x30, 0xFFFF, "EXIT"),
            alu(0x40, "R5", ("R4",))]  # after every lane has exited: not simulated
    t = simulate_kernel(_one_warp(body), GPU)
    assert t.warp_instructions == 3 and t.global_load_sectors == 2
    assert t.thread_instructions == 16 + 16 + 16


def test_a_barrier_that_ends_a_stream_ends_the_warp():
    body = [ld_global(0x10, "R4", 0x7F0000000000, 4), alu(0x20, "R5", ("R4",)), bar(0x30)]
    k = synthetic_kernel(ctas=2, warps_per_cta=2, body=lambda c, w: body)
    t = simulate_kernel(k, GPU)
    assert t.warp_instructions == 4 * 3 and t.ctas_simulated == 2


def test_v3_kernel_counts_thread_instructions_by_mask():
    (kernel,) = [k for k in iter_kernels(FIXTURES / "v3_grouped")]
    t = simulate_kernel(kernel, GPU)
    assert t.warp_instructions == 12
    assert t.thread_instructions == 2 * 5 * 32 + 16  # warp 1's LDS is off, warp 0's has 16
