"""Distinct device addresses per buffer across launches, and an L2 kept warm between launches."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernelwright.tools.gpusim.address_space import AddressSpace
from kernelwright.tools.gpusim.launch import launch
from kernelwright.tools.gpusim.timing import L2State, simulate_kernels, simulate_trace_dir
from kernelwright.tools.gpusim.traces import MemoryTraceSink

FIXTURES = Path(__file__).parents[2] / "fixtures" / "traces"


def test_each_buffer_gets_its_own_aligned_range_and_keeps_it():
    space = AddressSpace(granularity=1 << 16)
    bufs = [np.zeros(n, np.uint8) for n in (1, 70_000, 65_536, 10)]
    addrs = [space.address_of(b) for b in bufs]
    assert all(a % (1 << 16) == 0 for a in addrs)
    ranges = sorted((a, a + b.nbytes) for a, b in zip(addrs, bufs, strict=True))
    assert all(end < nxt for (_, end), (nxt, _) in zip(ranges, ranges[1:], strict=False))
    assert [space.address_of(b) for b in bufs] == addrs and len(space) == 4
    assert space.address_of(bufs[1][100:]) == addrs[1] + 100  # a view maps into its buffer
    with pytest.raises(ValueError, match="power of two"):
        AddressSpace(granularity=3000)


def test_the_same_allocation_order_gives_the_same_addresses():
    def addresses() -> list[int]:
        space = AddressSpace()
        return [space.address_of(np.ones(n, np.float32)) for n in (10, 1000, 10)]

    assert addresses() == addresses()


@pytest.mark.slow
def test_warm_l2_shows_reuse_between_launches_only_when_asked():
    cold = simulate_trace_dir(FIXTURES / "v5_clusters_grouped")
    warm = simulate_trace_dir(FIXTURES / "v5_clusters_grouped", warm_l2=True)
    assert cold[0] == warm[0].model_copy(update={"model_seconds": cold[0].model_seconds})
    assert cold[1].l2_hit_rate == 0.0 and cold[1].dram_read_bytes == 13 * 32
    assert warm[1].l2_hit_rate == 1.0 and warm[1].dram_read_bytes == 0  # reads what 1 wrote
    assert warm[1].cycles < cold[1].cycles
    assert warm[0].dram_write_bytes == cold[0].dram_write_bytes  # written back once, not twice
    assert warm[1].dram_write_bytes == 13 * 32


def test_l2_state_refuses_another_l2_geometry():
    from kernelwright.tools.gpusim.gpus import gpu_by_name

    gpu = gpu_by_name("rtx2080ti")
    other = gpu.model_copy(update={"l2_bytes": gpu.l2_bytes * 2})
    kernels = list(simulate_kernels([], gpu, warm_l2=True))
    assert kernels == []
    with pytest.raises(ValueError, match="new L2State"):
        L2State(gpu).check(other, "reference")


def _ldg_stg_addresses(kernel) -> tuple[set[int], set[int]]:
    loads, stores = set(), set()
    for w in kernel.warps():
        for i in w.instructions:
            if i.mem_width and i.opcode.startswith("ld.global"):
                loads.update(i.addresses)
            elif i.mem_width and i.opcode.startswith("st.global"):
                stores.update(i.addresses)
    return loads, stores


def test_emulated_launches_sharing_a_space_reuse_in_a_warm_l2(emu_ptx: str):
    n = 512
    x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    mid, out = np.zeros(n, np.float32), np.zeros(n, np.float32)

    def run(space_for: callable) -> MemoryTraceSink:
        sink = MemoryTraceSink()
        launch(emu_ptx, "vadd", (n // 256,), (256,), [x, y, mid, n], trace=sink,
               address_space=space_for())
        launch(emu_ptx, "vadd", (n // 256,), (256,), [mid, x, out, n], trace=sink,
               address_space=space_for())
        return sink

    shared = AddressSpace()
    sink = run(lambda: shared)
    np.testing.assert_array_equal(out, 2 * x + 1)
    (loads1, stores1), (loads2, _) = map(_ldg_stg_addresses, sink.kernels)
    assert stores1 <= loads2 and not stores1 & loads1  # kernel 2 reads where kernel 1 wrote
    cold, warm = (simulate_kernels(sink.kernels, warm_l2=w) for w in (False, True))
    assert cold[1].l2_hit_rate == 0.0
    assert warm[1].l2_hit_rate == 1.0  # mid written by kernel 1, x read by kernel 1
    assert warm[1].dram_read_bytes == 0 < cold[1].dram_read_bytes

    fresh = run(AddressSpace)  # the old behaviour: every launch restarts at the same base
    (f_loads1, _), (f_loads2, _) = map(_ldg_stg_addresses, fresh.kernels)
    assert f_loads1 == f_loads2  # different buffers, same addresses: why a space is needed
