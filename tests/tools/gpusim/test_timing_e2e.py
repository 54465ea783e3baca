"""End to end: PTX emulator -> TraceDirWriter -> reader -> timing model."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from kernelwright.tools.gpusim.timing import simulate_kernel, simulate_trace_dir
from kernelwright.tools.gpusim.traces import MemoryTraceSink, TraceDirWriter, iter_kernels

PTX = Path(__file__).parent / "data" / "sample_sm90.ptx"  # committed nvcc output (gpusim-emu)
from kernelwright.tools.gpusim.launch import launch  # noqa: E402  (ours: never skipped)


def _run(sink, n: int) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    ptx = PTX.read_text()
    launch(ptx, "vadd", (n // 256,), (256,), [x, y, np.zeros(n, np.float32), n], trace=sink)
    launch(ptx, "red", (n // 256,), (256,), [x, np.zeros(1, np.float32), n], trace=sink)


def test_emulated_kernels_round_trip_and_simulate(tmp_path: Path):
    n = 8192
    memory = MemoryTraceSink()
    _run(memory, n)
    with TraceDirWriter(tmp_path) as writer:
        writer.record_memcpy(0x7F0000000000, 4 * n)
        _run(writer, n)
    kernels = list(iter_kernels(tmp_path))
    assert [k.info.name for k in kernels] == ["vadd", "red"]
    for read, kept in zip(kernels, memory.kernels, strict=True):
        assert list(read.warps()) == kept.streams  # the text format loses nothing
    vadd, red = simulate_trace_dir(tmp_path, "rtx3080ti")
    assert vadd.dram_read_bytes == 2 * 4 * n  # x and y once each, fully coalesced
    assert vadd.global_load_sectors == 2 * 4 * n // 32
    assert red.shared_wavefronts > 0 and red.shared_bank_conflicts == 0
    assert red.cycles > 0 and vadd.cycles > 0
    direct = simulate_kernel(memory.kernels[0], "rtx3080ti")
    assert direct.cycles == vadd.cycles


@pytest.mark.requires_nvcc
def test_mm3_workload_traces_simulate_alike(tmp_path: Path):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    from kernelwright.config import Settings
    from kernelwright.tools.gpusim.workloads import get_workload

    settings = Settings(cache_dir=tmp_path / "cache")
    with TraceDirWriter(tmp_path / "trace") as writer:
        run = get_workload("mm3", settings=settings).run(sink=writer, size=32)
    assert run.max_error < 1e-4
    timings = simulate_trace_dir(tmp_path / "trace", "h100")
    assert len(timings) == 3
    assert len({t.warp_instructions for t in timings}) == 1
    cycles = [t.cycles for t in timings]
    assert max(cycles) <= 1.1 * min(cycles)  # three identical GEMM launches
    assert all(t.shared_wavefronts > 0 for t in timings)
