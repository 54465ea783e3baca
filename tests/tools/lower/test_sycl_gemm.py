"""The SYCL GEMM/convolution kernel staged through local memory (backends/sycl_gemm.py), the
sub-group row kernels, and the size of the SYCL schedule space."""

from __future__ import annotations

import itertools
import random

import pytest
from lower_helpers import check_lowered, task

from kernelwright.tools.lower import lower_task
from kernelwright.tools.lower.backends.sycl_gemm import (
    LOCAL_BYTES,
    SYCL_GEMM_CHOICES,
    SyclBlocking,
    fit,
)

# every value of every blocking parameter, in as few builds as the longest list of choices:
# point i takes each parameter's i-th value (cycling the shorter lists), so values meet in
# combinations (fit() legalises them) instead of one change at a time from the defaults
BLOCKING = ("mr", "nr", "vw", "kc", "mc", "nc")
POINTS = [{"g0.algo": "packed"}] + [
    {"g0.algo": "packed", **{f"g0.{p}": SYCL_GEMM_CHOICES[p][i % len(SYCL_GEMM_CHOICES[p])]
                             for p in BLOCKING}}
    for i in range(max(len(SYCL_GEMM_CHOICES[p]) for p in BLOCKING))]


def test_every_blocking_is_made_legal():
    """nr a multiple of vw, blocks multiples of the micro-tile, local buffers that fit."""
    keys = BLOCKING
    for combo in itertools.product(*(SYCL_GEMM_CHOICES[k] for k in keys)):
        for rows, cols, k in ((13, 29, 37), (2048, 2048, 2048), (1, 7, 3)):
            for size in (4, 8):
                bl = fit(SyclBlocking(**dict(zip(keys, combo, strict=True))), rows, cols, k,
                         1, size)
                assert bl.nr % bl.vw == 0 and bl.mc % bl.mr == 0 and bl.nc % bl.nr == 0
                assert (bl.mc * bl.kc + bl.kc * bl.nc + bl.mc * bl.nc) * size <= LOCAL_BYTES


@pytest.mark.requires_sycl
@pytest.mark.parametrize("nc", [32, 128])
def test_convolution_columns_stage_as_runs_of_the_input(nc):
    """conv_runs: rows that are no multiple of a tile, padding at both ends, stride 2, a
    dilated 1-D, transposed (stride 1 and per phase) and a transposed view's runs; B is
    staged through the per-column arrays and cut into runs (``sycl_columns``), with tiles
    of 32 and 128 columns, so runs stop at tile, row and image ends."""
    prog = lower_task(task("conv_runs"), "sycl")
    prog = prog.with_params({k: "kernel" for k in prog.space if k.endswith(".impl")})
    params = [k for k in prog.space if k.endswith(".nc")]
    p = prog.with_params({**{k: "gemm" for k in prog.space if k.endswith(".algo")},
                          **{k: nc for k in params}})
    assert "kw_cut[++kw_nrun]" in p.source and "kw_cv0[" in p.source
    check_lowered(p)


@pytest.mark.requires_sycl
def test_sycl_skips_transposed_phases_no_tap_reaches_and_runs_a_costly_epilogue_apart():
    """The phases of an all-zero K get K = 0 (bias and epilogue only); the sigmoid after a
    convolution defaults to a pointwise kernel of its own (``epi=pass``), and both forms of
    the epilogue are correct."""
    prog = lower_task(task("convt_empty_phases"), "sycl")
    prog = prog.with_params({k: "kernel" for k in prog.space if k.endswith(".impl")})
    prog = prog.with_params({k: "gemm" for k in prog.space if k.endswith(".algo")})
    assert prog.source.count("kw_kn = (") == 3 * len(prog.variants)
    epi = [k for k in prog.space if k.endswith(".epi")]
    # the sigmoid (cost 4) runs apart, relu + 1 (cost 2) stays in the store
    assert {k: prog.params[k] for k in epi} == {"g0.epi": "pass", "g1.epi": "fused"}
    for form in ("pass", "fused"):
        check_lowered(prog.with_params({k: form for k in epi}))


@pytest.mark.requires_sycl
@pytest.mark.parametrize("name", ["conv_runs", "convt_forms", "conv_groups", "conv_bn"])
def test_direct_convolution_forms_are_correct(name):
    """The direct forms: explicit vectors along an output row (``sycl_direct.py``: rows
    shorter than, and no multiple of, the vector; padding at both ends; dilation; groups;
    transposed convolutions of stride 1; a transposed view's input) at two vector widths and
    channel blocks, and the scalar
    work-items along output rows (``items``: also the transposed and strided-last-dim
    ones, which the vector form leaves to it), at two work-group sizes; 1-D to 3-D."""
    prog = lower_task(task(name), "sycl")
    prog = prog.with_params({k: "kernel" for k in prog.space if k.endswith(".impl")})
    direct = [k[:-len(".algo")] for k in prog.space if k.endswith(".algo")
              and "direct" in prog.space[k]]
    prog = prog.with_params({f"{g}.algo": "direct" for g in direct})
    points = [{"form": "vectors", "vw": 8, "ocb": 4}, {"form": "vectors", "vw": 4, "ocb": 1},
              {"form": "items", "wg": 16}, {"form": "items", "wg": 64}]
    for point in points:
        p = prog.with_params({f"{g}.{key}": v for g in direct for key, v in point.items()})
        # conv_bn (stride 2 along the last dim) keeps the items form throughout; the others
        # have a convolution of each form (convt_forms: a transposed one of stride 1)
        vectors = point["form"] == "vectors" and name != "conv_bn"
        assert ("SYCL direct convolution on vec" in p.source) == vectors
        assert "q_last" in p.source or vectors
        check_lowered(p)


@pytest.mark.requires_sycl
@pytest.mark.parametrize("name", ["gemm_epi", "bmm", "einsum_split_batch"])
def test_packed_sycl_gemm_is_correct_at_every_blocking_value(name):
    """Odd sizes (13x29x37), a transposed and batched operand (bmm), epilogues."""
    prog = lower_task(task(name), "sycl")
    prog = prog.with_params({k: "kernel" for k in prog.space if k.endswith(".impl")})
    for params in POINTS:
        p = prog.with_params(params)
        assert "SYCL packed GEMM" in p.source and "work_group_static" in p.source
        check_lowered(p)


@pytest.mark.requires_sycl
@pytest.mark.parametrize("name", ["matmul_kn", "matmul_4d", "conv_groups", "conv_bn",
                                  "convt_forms"])
def test_packed_sycl_gemm_and_implicit_gemm_convolution(name):
    """A shared operand folded into the batch, 4-D batches with a transposed operand, grouped
    strided dilated convolution, convolution + batch norm, transposed convolutions."""
    prog = lower_task(task(name), "sycl")
    prog = prog.with_params({k: "kernel" for k in prog.space if k.endswith(".impl")})
    algo = {k: ("packed" if "packed" in v else "gemm") for k, v in prog.space.items()
            if k.endswith(".algo")}
    for extra in ({}, {"g0.mr": 2, "g0.nr": 24, "g0.vw": 4, "g0.kc": 64, "g0.mc": 16}):
        p = prog.with_params({**algo, **{k: v for k, v in extra.items() if k in prog.space}})
        assert "SYCL packed GEMM" in p.source
        check_lowered(p)


@pytest.mark.requires_sycl
@pytest.mark.parametrize("name", ["softmax_last", "layernorm3"])
def test_subgroup_rows_are_correct_for_each_shape(name):
    prog = lower_task(task(name), "sycl")
    for sg, rpg in ((8, 1), (16, 4), (32, 8)):
        p = prog.with_params({"g0.strategy": "subgroup", "g0.sg": sg, "g0.rpg": rpg})
        assert f"sub_group_size<{sg}>" in p.source
        check_lowered(p)


@pytest.mark.parametrize("name", ["gemm_epi", "conv_bn", "softmax_last", "layernorm3",
                                  "groupnorm"])
def test_sycl_space_has_at_least_twenty_distinct_schedules(name):
    """Distinct kernel sources (not just distinct parameter sets) among random points."""
    prog = lower_task(task(name), "sycl")
    rng = random.Random(0)
    sources = set()
    for _ in range(300):
        point = {k: rng.choice(v) for k, v in prog.space.items()}
        sources.add(prog.with_params(point).source)
        if len(sources) >= 20:
            break
    assert len(sources) >= 20
