"""Sanity tests for the reference timing model: the right things move cycles the right way."""

from __future__ import annotations

import pytest

from kernelwright.tools.gpusim._opclass import OpClass, classify
from kernelwright.tools.gpusim._synthetic import (
    alu,
    bar,
    exit_,
    ld_global,
    ld_shared,
    st_global,
    st_shared,
    synthetic_kernel,
)
from kernelwright.tools.gpusim.gpus import GPUS, gpu_by_name
from kernelwright.tools.gpusim.records import KernelInfo
from kernelwright.tools.gpusim.timing import occupancy, simulate_kernel

SMALL = gpu_by_name("rtx2080ti").model_copy(
    update={"num_sms": 4, "name": "small", "unified_l1_bytes": 0})  # L1 fixed by l1_bytes
MB = 1 << 20


def _loads(stride: int, n: int = 8):
    def body(cta: int, warp: int):
        base = 0x10000000 + (cta * 8 + warp) * n * 32 * stride
        out = []
        for i in range(n):
            out.append(ld_global(0x20 * i, f"R{4 + i}", base + i * 32 * stride, stride))
            out.append(alu(0x20 * i + 0x10, f"R{40 + i}", (f"R{4 + i}",)))
        return [*out, exit_(0x400)]

    return body


def test_strided_loads_are_slower_than_coalesced():
    fast = simulate_kernel(synthetic_kernel(ctas=16, warps_per_cta=8, body=_loads(4)), SMALL)
    slow = simulate_kernel(synthetic_kernel(ctas=16, warps_per_cta=8, body=_loads(128)), SMALL)
    assert slow.global_load_sectors == 8 * fast.global_load_sectors
    assert slow.dram_read_bytes > 4 * fast.dram_read_bytes
    assert slow.cycles > 2 * fast.cycles
    assert fast.warp_instructions == slow.warp_instructions == 16 * 8 * 17


def _matmul_like(tiled: bool, warps: int = 8, region: int = 16 * 1024):
    """Each CTA needs a ``region`` of global data in every warp: naive reads it per warp,
    tiled reads it once into shared memory and then reads shared memory."""
    per_warp = region // warps
    chunks = region // 128  # 32 lanes x 4 bytes per load

    def body(cta: int, warp: int):
        base = 0x20000000 + cta * region
        out, pc = [], 0
        if tiled:
            for i in range(per_warp // 128):
                out += [ld_global(pc, "R4", base + warp * per_warp + 128 * i, 4),
                        st_shared(pc + 0x10, "R4", (warp * per_warp + 128 * i) % 32768, 4)]
                pc += 0x20
            out.append(bar(pc))
            pc += 0x10
        for i in range(chunks):
            if tiled:
                out.append(ld_shared(pc, "R5", (128 * i) % 32768, 4))
            else:  # warps start at different offsets, as rows of a matmul would
                out.append(ld_global(pc, "R5", base + (warp * per_warp + 128 * i) % region, 4))
            out.append(alu(pc + 0x10, "R6", ("R5", "R6")))
            pc += 0x20
        return [*out, exit_(pc)]

    return body


def test_shared_memory_tiling_cuts_dram_traffic_and_cycles():
    tiny = SMALL.model_copy(update={"l1_bytes": 2 * 1024, "l2_bytes": 16 * 1024})
    naive = simulate_kernel(
        synthetic_kernel(ctas=4, warps_per_cta=8, body=_matmul_like(False)), tiny)
    tiled = simulate_kernel(
        synthetic_kernel(ctas=4, warps_per_cta=8, body=_matmul_like(True), shmem=32768), tiny)
    assert tiled.dram_read_bytes < naive.dram_read_bytes / 2
    assert tiled.shared_wavefronts > 0
    assert tiled.cycles < naive.cycles


def _pointer_chase(cta: int, warp: int):
    base = 0x30000000 + (cta * 4 + warp) * 4096 * 10
    out = [ld_global(0x10 * i, "R4", base + 4096 * i, 4, addr_reg="R4") for i in range(10)]
    return [*out, exit_(0x200)]


def test_more_registers_per_thread_means_fewer_warps_and_more_cycles():
    lean = synthetic_kernel(ctas=64, warps_per_cta=4, body=_pointer_chase, nregs=32)
    fat = synthetic_kernel(ctas=64, warps_per_cta=4, body=_pointer_chase, nregs=255)
    occ_lean, occ_fat = occupancy(lean.info, SMALL), occupancy(fat.info, SMALL)
    assert occ_lean.warps_per_sm > occ_fat.warps_per_sm
    assert occ_fat.limiter == "registers"
    t_lean, t_fat = simulate_kernel(lean, SMALL), simulate_kernel(fat, SMALL)
    assert t_fat.waves > t_lean.waves
    assert t_fat.cycles > 1.5 * t_lean.cycles


def _shared_reads(stride: int):
    def body(cta: int, warp: int):
        out = []
        for i in range(16):
            out += [ld_shared(0x20 * i, "R5", 4 * i, stride), alu(0x20 * i + 0x10, "R6", ("R5",))]
        return [*out, exit_(0x400)]

    return body


def test_bank_conflicts_are_slower():
    clean = simulate_kernel(synthetic_kernel(ctas=8, warps_per_cta=8, body=_shared_reads(4)),
                            SMALL)
    conflicted = simulate_kernel(
        synthetic_kernel(ctas=8, warps_per_cta=8, body=_shared_reads(128)), SMALL)
    assert clean.shared_bank_conflicts == 0
    assert conflicted.shared_bank_conflicts == 8 * 8 * 16 * 31
    assert conflicted.cycles > 4 * clean.cycles


def _compute(cta: int, warp: int):
    out = [alu(0x10 * i, f"R{4 + i % 8}", (f"R{4 + (i + 7) % 8}",)) for i in range(32)]
    return [*out, st_global(0x800, "R4", 0x40000000 + (cta * 8 + warp) * 128, 4), exit_(0x810)]


def test_more_sms_mean_fewer_cycles_for_a_large_grid():
    kernel = synthetic_kernel(ctas=128, warps_per_cta=8, body=_compute)
    few = simulate_kernel(kernel, SMALL.scaled(sms=0.5))
    many = simulate_kernel(kernel, SMALL.scaled(sms=2.0))
    assert many.cycles < few.cycles / 2


def _reuse(cta: int, warp: int):
    region = 512 * 1024  # four CTAs sweep it; sixteen CTAs sweep it four times
    start = (cta * 128 * 1024 + warp * 16 * 1024) % region
    out = [ld_global(0x10 * (i % 64), "R4", 0x50000000 + start + 128 * i, 4) for i in range(128)]
    return [*out, exit_(0x800)]


def test_bigger_l2_means_fewer_cycles_for_reuse():
    kernel = synthetic_kernel(ctas=16, warps_per_cta=8, body=_reuse)
    small = simulate_kernel(kernel, SMALL.model_copy(update={"l2_bytes": 256 * 1024}))
    big = simulate_kernel(kernel, SMALL.model_copy(update={"l2_bytes": 1024 * 1024}))
    assert big.l2_hit_rate > small.l2_hit_rate
    assert big.dram_read_bytes < small.dram_read_bytes / 2
    assert big.cycles < small.cycles


def test_barrier_waits_for_the_slowest_warp():
    def body(cta: int, warp: int):
        slow = [alu(0x10 * i, "R4", ("R4",), op="DFMA") for i in range(10 if warp == 0 else 0)]
        return [*slow, bar(0x100), alu(0x110, "R5", ("R5",)), exit_(0x120)]

    with_bar = simulate_kernel(synthetic_kernel(ctas=1, warps_per_cta=4, body=body), SMALL)
    assert with_bar.cycles > 10 * SMALL.fp64_latency


def test_scheduling_policies_both_finish_and_bad_policy_raises():
    kernel = synthetic_kernel(ctas=8, warps_per_cta=8, body=_loads(4))
    gto, lrr = simulate_kernel(kernel, SMALL, "gto"), simulate_kernel(kernel, SMALL, "lrr")
    assert gto.warp_instructions == lrr.warp_instructions
    assert gto.cycles > 0 and lrr.cycles > 0
    with pytest.raises(ValueError, match="gto"):
        simulate_kernel(kernel, SMALL, "fifo")


def test_oversized_cta_is_flagged_not_fatal():
    info = KernelInfo(1, "big", (1, 1, 1), (1024, 1, 1), shmem=1 << 20, nregs=64)
    occ = occupancy(info, SMALL)
    assert not occ.fits and occ.ctas_per_sm == 1


@pytest.mark.parametrize(("opcode", "cls"), [
    ("LDG.E.128.SYS", OpClass.LD_GLOBAL), ("LDG.E.128.CONSTANT.SYS", OpClass.LD_GLOBAL),
    ("STG.E.128.SYS", OpClass.ST_GLOBAL), ("STS", OpClass.ST_SHARED),
    ("BAR.SYNC", OpClass.BARRIER), ("FFMA", OpClass.FP32), ("DFMA", OpClass.FP64),
    ("MUFU.RCP", OpClass.SFU),
    ("HMMA.16816.F32", OpClass.TENSOR), ("ISETP.GE.U32.AND", OpClass.INT), ("BRA", OpClass.BRANCH),
    ("ld.global.f32", OpClass.LD_GLOBAL), ("st.shared.u32", OpClass.ST_SHARED),
    ("ld.shared::cta.v4.f32", OpClass.LD_SHARED), ("bar.sync", OpClass.BARRIER),
    ("fma.rn.f32", OpClass.FP32), ("fma.rn.f64", OpClass.FP64), ("ld.param.u64", OpClass.LD_CONST),
    ("cvt.u64.u32", OpClass.INT), ("cvt.rn.f32.s32", OpClass.SFU), ("ex2.approx.f32", OpClass.SFU),
    ("atom.global.add.u32", OpClass.ATOM_GLOBAL), ("cp.async.wait_all", OpClass.ASYNC_WAIT),
    ("mad.lo.s32", OpClass.INT), ("ret", OpClass.BRANCH), ("exit", OpClass.EXIT),
])
def test_opcode_classifier(opcode: str, cls: OpClass):
    assert classify(opcode) == cls


def test_gpu_by_name_lists_choices_and_scaled_changes_what_it_says():
    with pytest.raises(ValueError, match="rtx2080ti"):
        gpu_by_name("voodoo2")
    assert gpu_by_name("Hopper").name == "h100"
    g = GPUS["a100"]
    half = g.scaled(cache=0.5, sms=0.5)
    assert half.l2_bytes == g.l2_bytes // 2 and half.num_sms == g.num_sms // 2
    assert half.dram_gbs == g.dram_gbs and "cachex0.5" in half.name
    for gpu in GPUS.values():
        assert gpu.dram_bytes_per_cycle > 100 and gpu.max_warps_per_sm * 32 >= 1024
        assert gpu.l1_bytes_for(0) > gpu.l1_bytes_for(gpu.shared_bytes_per_sm) == gpu.l1_bytes


def test_empty_warps_and_blocks_do_not_stall_the_model():
    def body(cta: int, warp: int):
        return [] if cta % 2 or warp == 1 else [alu(0, "R4", ("R4",)), exit_(0x10)]

    t = simulate_kernel(synthetic_kernel(ctas=2000, warps_per_cta=2, body=body), SMALL)
    assert t.ctas_simulated == 2000 and t.warp_instructions == 2 * 1000
