"""Accel-Sim trace writer and streaming reader: real-syntax fixtures and round trips."""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from kernelwright.errors import TraceFormatError
from kernelwright.tools.gpusim._trace_format import compress_addresses
from kernelwright.tools.gpusim.gpus import gpu_by_name
from kernelwright.tools.gpusim.records import KernelInfo, TraceInstruction, WarpStream
from kernelwright.tools.gpusim.timing import simulate_kernel, simulate_trace_dir
from kernelwright.tools.gpusim.traces import (
    MemcpyCommand,
    TraceDirWriter,
    TraceKernelFile,
    TraceSampling,
    iter_kernels,
    read_trace_dir,
)

FIXTURES = Path(__file__).parents[2] / "fixtures" / "traces"
FULL = 0xFFFFFFFF
SMALL_GPU = gpu_by_name("rtx2080ti")


def test_v5_dir_yields_memcpys_and_kernels_in_order():
    items = list(read_trace_dir(FIXTURES / "v5_grouped"))
    kinds = [type(i).__name__ for i in items]
    assert kinds == ["MemcpyCommand", "TraceKernelFile", "MemcpyCommand", "TraceKernelFile"]
    assert items[0] == MemcpyCommand("MemcpyHtoD", 0x7F580FA00000, 1048576)
    k1 = items[1]
    assert k1.info.name == "_Z9vectorAddPKfS0_Pfi" and k1.info.grid == (2, 1, 1)
    assert k1.info.block == (64, 1, 1) and k1.info.nregs == 16 and k1.info.binary_version == 86
    assert k1.info.shmem_base == 0x7F5813000000 and k1.info.extra["nvbit version"] == "1.5.5"
    assert k1.version == 5 and k1.grouped


def test_v5_instruction_fields_match_the_real_syntax():
    k1 = next(iter_kernels(FIXTURES / "v5_grouped"))
    warps = list(k1.warps())
    assert [(w.cta, w.warp_id) for w in warps] == [((0, 0, 0), 0), ((0, 0, 0), 1),
                                                    ((1, 0, 0), 0), ((1, 0, 0), 1)]
    mov, _, isetp, bra, ldg, _, _, stg, exit_ = warps[0].instructions
    assert mov.srcs == ("R255", "R255") and mov.dests == ("R1",)
    assert isetp.opcode == "ISETP.GE.U32.AND" and isetp.srcs == ("R2",) and isetp.immediate == 1024
    assert bra.mask == 0 and bra.immediate == 528 and bra.mem_width == 0
    assert ldg.mem_width == 16 and ldg.dests == ("R12",)
    assert ldg.addresses == tuple(0x7F580FACE400 + 16 * i for i in range(32))
    assert stg.srcs == ("R8", "R12") and stg.addresses[31] == 0x7F580FB3C400 + 16 * 31
    assert exit_.opcode == "EXIT" and exit_.pc == 0x1F0
    assert warps[3].instructions[4].addresses[0] == 0x7F580FACE400 + 0x200 * 3


def test_xz_kernel_with_lineinfo_garbage_nregs_and_modes_2_and_0():
    k2 = list(iter_kernels(FIXTURES / "v5_grouped"))[1]
    assert k2.path.name == "kernel-2.traceg.xz" and k2.lineinfo
    assert k2.info.nregs == 0 and k2.info.extra["nregs (untrusted)"] == "4294967295"
    assert k2.info.binary_version == 0 and k2.info.shmem == 1024
    w0, w1 = k2.warps()
    ldg, lds, barrier, ffma, _ = w0.instructions
    base = 0x7EFE7B60C300
    assert ldg.addresses == (base, base + 16, base + 32, base + 48, base + 2048)
    assert ldg.immediate == 0 and ldg.pc == 0x1020
    assert lds.addresses == (0, 4, 8, 0x100)
    assert w1.instructions[1].addresses == (0x80, 0x84, 0x88, 0x180)
    assert lds.mask == 0xF and barrier.opcode == "BAR.SYNC" and len(ffma.srcs) == 3


def test_raw_trace_regroups_interleaved_warps():
    kernel = next(iter_kernels(FIXTURES / "v4_raw"))
    assert not kernel.grouped and kernel.version == 4
    warps = list(kernel.warps())
    assert sorted((w.cta, w.warp_id) for w in warps) == [((0, 0, 0), 0), ((0, 0, 0), 1),
                                                         ((1, 0, 0), 0), ((1, 0, 0), 1)]
    ctas = [w.cta for w in warps]
    assert ctas == sorted(ctas, key=ctas.index)  # each CTA's warps come together
    grouped = {(w.cta, w.warp_id): w for w in next(iter_kernels(FIXTURES / "v5_grouped")).warps()}
    for w in warps:
        assert w.instructions == grouped[(w.cta, w.warp_id)].instructions


def _kernel_streams() -> list[WarpStream]:
    def insts(w: int) -> tuple[TraceInstruction, ...]:
        b = 0x7F0000000000 + 0x1000 * w
        return (
            TraceInstruction(0x00, FULL, "ld.param.u64", ("%rd1",), (), 8, (0x100,) * 32),
            TraceInstruction(0x10, FULL, "ld.global.f32", ("%f1",), ("%rd1",), 4,
                             tuple(b + 4 * i for i in range(32))),  # mode 1
            TraceInstruction(0x20, 0x0F0F0F0F, "ld.global.f32", ("%f2",), ("%rd1",), 4,
                             tuple(b + 4 * i for i in range(16))),  # non-contiguous: mode 2
            TraceInstruction(0x30, 1 << 7, "st.shared.u32", (), ("%r1", "%f1"), 4, (0x40,)),
            TraceInstruction(0x40, FULL, "st.global.f32", (), ("%rd1", "%f2"), 4,
                             tuple(b - 8 * i for i in range(32))),  # negative stride
            TraceInstruction(0x50, 0, "bra.uni", (), (), 0, (), 528),
            TraceInstruction(0x60, FULL, "ret", (), ()),
        )

    return [WarpStream((c, 0, 0), w, insts(w)) for c in range(4) for w in range(2)]


INFO = KernelInfo(0, "_Z4testPf", (4, 1, 1), (64, 1, 1), shmem=256, nregs=24,
                  extra={"source file": "test.cu"})


@pytest.mark.parametrize(("compress", "xz"), [(True, False), (False, False), (True, True)])
def test_round_trip_writer_to_reader(tmp_path: Path, compress: bool, xz: bool):
    streams = _kernel_streams()
    with TraceDirWriter(tmp_path, compress_addresses=compress, xz=xz) as w:
        w.record_memcpy(0x7F0000000000, 4096)
        for _ in range(2):
            w.begin_kernel(INFO)
            for s in streams:
                w.warp(s)
            w.end_kernel()
    items = list(read_trace_dir(tmp_path))
    assert items[0] == MemcpyCommand("MemcpyHtoD", 0x7F0000000000, 4096)
    kernels = items[1:]
    assert [k.info.kernel_id for k in kernels] == [1, 2]
    k = kernels[0]
    assert k.info.grid == INFO.grid and k.info.nregs == 24 and k.info.shmem == 256
    assert k.info.extra["trace source"] == "ptx-emulator"
    assert k.info.extra["source file"] == "test.cu"
    assert k.info.extra["accelsim tracer version"] == "5"
    assert list(k.warps()) == streams
    text = (lzma.open(k.path, "rt") if xz else open(k.path)).read()
    modes = {line.split()[8] for line in text.splitlines() if " ld.global.f32 " in line}
    assert modes == ({"1", "2"} if compress else {"0"})


def test_compression_follows_the_tracer():
    assert compress_addresses(FULL, tuple(100 + 4 * i for i in range(32))) == "1 0x64 4"
    assert compress_addresses(0b11, (100, 92)) == "1 0x64 -8"
    assert compress_addresses(0b101, (100, 104)) == "2 0x64 4"  # lanes not contiguous
    assert compress_addresses(0b1000, (256,)) == "2 0x100"  # a single lane
    assert compress_addresses(0b111, (0, 16, 48)) == "2 0x0 16 32"
    assert compress_addresses(0b111, (0, 16, 48), compress=False) == "0 0x0 0x10 0x30"
    scattered = (0x7F0000000000, 0x10, 0x7F0000000000)  # deltas longer than the addresses
    assert compress_addresses(0b111, scattered).startswith("0 ")


def test_sampling_bounds_the_trace_and_records_it(tmp_path: Path):
    sampling = TraceSampling(cta_every=2, warps_per_cta=1)
    with TraceDirWriter(tmp_path, sampling=sampling) as w:
        w.begin_kernel(INFO)
        for s in _kernel_streams():
            w.warp(s)
    k = next(iter_kernels(tmp_path))
    assert [(s.cta, s.warp_id) for s in k.warps()] == [((0, 0, 0), 0), ((2, 0, 0), 0)]
    assert k.info.extra["sampled ctas"] == "2/4"
    assert w.warp_instructions == 2 * 7
    one_wave = SMALL_GPU.model_copy(update={"num_sms": 1, "max_ctas_per_sm": 1})
    timing = simulate_kernel(k, one_wave)
    assert timing.ctas_simulated == 2 and timing.grid_ctas == 4
    assert timing.cycles == 2 * timing.simulated_cycles  # 4 waves extrapolated from 2


def test_malformed_line_names_file_and_line(tmp_path: Path):
    text = (FIXTURES / "v5_grouped" / "kernel-1.traceg").read_text()
    bad = text.replace("16 1 0x7f580face400 16 0", "16 0 0x7f580face400", 1)
    (tmp_path / "kernel-1.traceg").write_text(bad)
    with pytest.raises(TraceFormatError, match=r"kernel-1.traceg:\d+"):
        list(TraceKernelFile(tmp_path / "kernel-1.traceg").warps())


def test_missing_kernelslist_and_missing_kernel_file_say_how_to_fix(tmp_path: Path):
    with pytest.raises(TraceFormatError, match="kernelslist"):
        list(read_trace_dir(tmp_path))
    (tmp_path / "kernelslist.g").write_text("kernel-7.traceg\n")
    with pytest.raises(TraceFormatError, match="kernel-7"):
        list(read_trace_dir(tmp_path))


def test_real_fixture_traces_simulate():
    grouped = simulate_trace_dir(FIXTURES / "v5_grouped", "rtx2080ti")
    raw = simulate_trace_dir(FIXTURES / "v4_raw", "rtx2080ti")
    assert len(grouped) == 2 and len(raw) == 1
    assert grouped[0].warp_instructions == 4 * 9 == raw[0].warp_instructions
    assert grouped[0].cycles == raw[0].cycles > grouped[0].occupancy.ctas_per_sm
    assert grouped[0].global_load_sectors == 4 * 2 * 16  # two 512-byte LDG.128 per warp
    assert grouped[1].cycles > 0


def test_old_traceg_lines_keep_their_block_and_warp_prefix(tmp_path: Path):
    header = (FIXTURES / "v5_grouped" / "kernel-1.traceg").read_text().split("#BEGIN_TB")[0]
    body = ("#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 2\n"
            "0 0 0 0 0040 ffffffff 0 ISETP.GE.U32.AND 1 R2 0\n"
            "0 0 0 0 00a0 ffffffff 1 R12 LDG.E.128.SYS 1 R2 16 1 0x7f580face400 16\n#END_TB\n")
    path = tmp_path / "kernel-1.traceg"
    path.write_text(header.replace("tracer version = 5", "tracer version = 2") + body)
    (warp,) = TraceKernelFile(path).warps()
    isetp, ldg = warp.instructions
    assert isetp.pc == 0x40 and isetp.immediate == 0 and ldg.addresses[1] == 0x7F580FACE410
