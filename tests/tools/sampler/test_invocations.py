"""Scanning a trace folder: profiles, digests, shared graphs, the on-disk cache."""

from __future__ import annotations

from kernelwright.tools.sampler import scan_trace_dir


def test_scan_profiles_and_shares_graphs(tiny_traces):
    t = tiny_traces
    assert len(t) == 26
    assert [i.name for i in t.invocations[:2]] == ["scale", "reduce"]
    scale = [i for i in t.invocations if i.name == "scale"]
    assert len({i.trace_digest for i in scale}) == 1  # identical launches
    assert len({t.graph_of[i.index] for i in scale}) == 1
    reduce_ = [i for i in t.invocations if i.name == "reduce"]
    assert len({i.trace_digest for i in reduce_}) == 4  # trip counts 2..5
    assert len(t.graphs) == 1 + 4 + 1


def test_profile_extrapolates_sampled_ctas(tiny_traces):
    big = [i for i in tiny_traces.invocations if i.name == "big"][0].profile
    small = [i for i in tiny_traces.invocations if i.name == "reduce"][0].profile
    assert big.grid_ctas == 64 and big.scale == 64 * 2 / 8  # 128 warps, 8 traced
    # 16 trips x 5 + 3 instructions per warp, all 128 warps
    assert big.warp_instructions == 128 * (16 * 5 + 3)
    assert big.count("ld_global") == 128 * 16
    assert big.global_load_sectors == 128 * 16 * 4  # 32 lanes x 4 bytes = 4 sectors
    assert small.scale == 1.0
    assert big.time_proxy > small.time_proxy > 0


def test_scan_cache_round_trip(tiny_trace, tmp_settings):
    a = scan_trace_dir(tiny_trace, settings=tmp_settings)
    files = list((tmp_settings.cache_dir / "sampler-scan").glob("*.pkl"))
    assert len(files) == 1
    b = scan_trace_dir(tiny_trace, settings=tmp_settings)
    assert [i.trace_digest for i in a.invocations] == [i.trace_digest for i in b.invocations]
    assert [g.digest for g in a.graphs] == [g.digest for g in b.graphs]
