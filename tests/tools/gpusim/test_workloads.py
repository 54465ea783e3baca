"""Every workload replayed on the emulator matches its numpy reference, with the right launches."""

from __future__ import annotations

from collections import Counter

import pytest

from kernelwright.config import Settings
from kernelwright.tools.gpusim import TraceSampling
from kernelwright.tools.gpusim.workloads import WORKLOADS, get_workload

pytestmark = pytest.mark.requires_nvcc


@pytest.fixture
def settings(gpusim_settings) -> Settings:
    return gpusim_settings


def run(name: str, settings: Settings, **params):
    return get_workload(name, settings=settings).run(**params)


def test_bfs_two_launches_per_level(settings):
    r = run("bfs", settings, nodes=512)
    assert r.max_error == 0
    levels = int(r.outputs["cost"].max()) + 1
    assert r.n_launches == 2 * levels  # the last level finds nothing new
    names = [s.kernel for s in r.launches]
    assert names[:2] == ["bfs_expand", "bfs_update"]
    work = [s.thread_instructions for s in r.launches[::2]]
    assert max(work) > 1.5 * min(work)  # work follows the frontier


def test_lud_launch_count_and_result(settings):
    r = run("lud", settings, size=64)
    assert r.n_launches == 3 * (64 // 16 - 1) + 1
    assert r.max_error < 1e-5
    internal = [s.grid for s in r.launches if s.kernel == "lud_internal"]
    assert internal == [(3, 3, 1), (2, 2, 1), (1, 1, 1)]  # the grid shrinks every step


def test_gaussian_elimination(settings):
    r = run("gaussian", settings, size=16)
    assert r.n_launches == 2 * (16 - 1)
    assert r.max_error < 1e-5


def test_3mm(settings):
    r = run("mm3", settings, size=32)
    assert r.n_launches == 3 and r.max_error < 1e-5


def test_cfd_iterations(settings):
    r = run("cfd", settings, elements=256, iterations=2)
    assert r.n_launches == 3 + 2 * 7
    assert r.max_error < 1e-5
    flux = [s.thread_instructions for s in r.launches if s.kernel == "cfd_flux"]
    assert len(set(flux)) == 1  # near-identical repeats


def test_srad(settings):
    r = run("srad", settings, rows=32, cols=48, iterations=2)
    assert r.n_launches == 4 and r.max_error < 1e-5


@pytest.mark.parametrize("name", ["phi2", "qwen15", "pythia"])
@pytest.mark.slow
def test_llm_decode_loops(settings, name):
    r = run(name, settings, prompt=4, steps=2)
    assert r.max_error < 1e-4
    assert r.outputs["logits"].shape == (3, 256)
    kinds = Counter(s.kernel for s in r.launches)
    assert kinds["gemm"] > 0 and kinds["gemv"] > 0  # prefill GEMMs, decode GEMVs
    per_layer_token = (r.n_launches - 3 * 2) / (3 * 2)  # minus embed + final norm/head per step
    assert 13 <= per_layer_token <= 25
    scores = [s.grid for s in r.launches if s.kernel == "attn_scores"]
    assert scores[0] != scores[-1]  # prefill vs decode shapes of one kernel name


def test_workload_traces_reach_the_sink(settings):
    class Count:
        def __init__(self):
            self.kernels, self.warps, self.insts = 0, 0, 0

        def begin_kernel(self, info):
            self.kernels += 1

        def warp(self, stream):
            self.warps += 1
            self.insts += len(stream.instructions)

        def end_kernel(self):
            pass

    sink = Count()
    every2 = TraceSampling(cta_every=2)
    r = get_workload("mm3", settings=settings).run(sink=sink, size=32, sampling=every2)
    assert sink.kernels == 3
    assert sink.warps == 3 * 2 * 8  # 4 CTAs per launch, every 2nd traced, 8 warps each
    assert 0 < sink.insts < sum(s.warp_instructions for s in r.launches)


def test_unknown_workload_lists_choices():
    with pytest.raises(ValueError, match="mm3"):
        get_workload("nope")
    assert set(WORKLOADS) >= {"bfs", "lud", "gaussian", "mm3", "cfd", "srad", "phi2", "qwen15",
                              "pythia"}  # fmt: skip


def test_unknown_parameter_is_rejected(settings):
    with pytest.raises(ValueError, match="size"):
        get_workload("mm3", settings=settings).run(bogus=1)


@pytest.mark.slow
def test_lud_256_has_46_launches(settings):
    r = run("lud", settings, size=256)
    assert r.n_launches == 46 and r.max_error < 1e-5


def test_a_workload_run_keeps_each_buffer_at_one_address_across_launches(settings):
    """3mm's third launch reads E and F where the first two wrote them (one host program, one
    set of allocations), and the three output buffers do not share addresses."""
    from kernelwright.tools.gpusim.traces import MemoryTraceSink

    sink = MemoryTraceSink()
    r = get_workload("mm3", settings=settings).run(sink=sink, size=16)
    assert r.max_error < 1e-4

    def touched(kernel, op: str) -> set[int]:
        return {a for w in kernel.warps() for i in w.instructions
                if i.mem_width and i.opcode.startswith(op) for a in i.addresses}

    k1, k2, k3 = sink.kernels
    e, f = touched(k1, "st.global"), touched(k2, "st.global")
    assert e and f and not e & f
    assert e | f <= touched(k3, "ld.global")
    assert not (e | f) & touched(k3, "st.global")


def test_replay_gives_another_launcher_the_same_program_and_data(settings):
    from kernelwright.tools.gpusim.launch import launch

    w = get_workload("mm3", settings=settings)
    ptx, calls = w.ptx(), []

    def launcher(kernel, grid, block, *args, shared=0):  # what a GPU's launcher would get
        calls.append(kernel)
        launch(ptx, kernel, grid, block, list(args), shared)

    outputs, reference = w.replay(launcher, size=24)
    emulated = w.run(size=24)
    assert calls == ["mm_tiled"] * emulated.n_launches
    assert (outputs["G"] == emulated.outputs["G"]).all()
    assert abs(outputs["G"] - reference["G"]).max() < 1e-3
