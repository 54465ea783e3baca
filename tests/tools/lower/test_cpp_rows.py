"""C++ row groups under their structural schedule: every point correct on awkward shapes
(odd lengths, tails past the block and lane widths, batch 1, 3-D to 5-D, non-last dims),
the one-pass forms really one sweep, and a space large enough to search."""

from __future__ import annotations

import itertools

import pytest
from lower_helpers import check_lowered, task

from kernelwright.tools.lower import lower_task
from kernelwright.tools.lower.backends.cpp_rows import ONE_PASS_CHOICES, ROW_CHOICES

AWKWARD = ["rows_softmax_awkward", "rows_norm_awkward", "rows_full", "rows_arg",
           "softmax_mid", "layernorm3", "groupnorm", "reduce_multi"]


def _all_groups(prog, **values) -> dict:
    """``values`` set on every group that has the parameter."""
    out = {}
    for key in prog.space:
        name = key.split(".", 1)[1]
        if name in values:
            out[key] = values[name]
    return out


def _kernel(prog, name: str) -> str:
    src = prog.source
    start = src.index(f"void {name}(")
    return src[start:src.index("\n}\n", start)]


# each value of every parameter at least once, and the one-pass forms with every block size,
# lane count and thread rule
COVER = [
    {},
    {"passes": "one", "block": 256},
    {"passes": "one", "block": 1024, "lanes": 8, "threads": "one"},
    {"passes": "one", "block": 4096, "simdlen": 16, "threads": "team"},
    {"lanes": 16, "simdlen": 8},
    {"lanes": 8, "threads": "team", "grain": 8192},
    {"threads": "auto", "grain": 131072, "simdlen": 16},
    {"passes": "one", "block": 256, "lanes": 16, "simdlen": 8, "threads": "team"},
]


@pytest.mark.parametrize("name", AWKWARD)
def test_every_cover_point_matches_torch(name):
    prog = lower_task(task(name), "cpp")
    for point in COVER:
        check_lowered(prog.with_params(_all_groups(prog, **point)))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["rows_softmax_awkward", "rows_norm_awkward"])
def test_every_structural_point_matches_torch(name):
    """The whole product of the structural parameters (threads cycled through)."""
    prog = lower_task(task(name), "cpp")
    keys = ["passes", "block", "lanes", "simdlen"]
    choices = {**ROW_CHOICES, **ONE_PASS_CHOICES}
    threads = itertools.cycle(["auto", "team", "one"])
    for combo in itertools.product(*(choices[k] for k in keys)):
        point = dict(zip(keys, combo, strict=True), threads=next(threads))
        check_lowered(prog.with_params(_all_groups(prog, **point)))


@pytest.mark.parametrize("name", ["softmax_last", "layernorm3", "rows_softmax_awkward"])
def test_row_space_has_at_least_20_distinct_points(name):
    prog = lower_task(task(name), "cpp")
    g0 = {k: v for k, v in prog.space.items() if k.startswith("g0.")}
    assert {"g0.passes", "g0.block", "g0.lanes", "g0.simdlen", "g0.threads"} <= set(g0)
    size = 1
    for v in g0.values():
        size *= len(v)
    assert size >= 20
    sources = set()
    for combo in itertools.product(*g0.values()):
        sources.add(prog.with_params(dict(zip(g0, combo, strict=True))).source)
        if len(sources) >= 20:
            break
    assert len(sources) >= 20


def test_one_pass_softmax_reads_the_input_in_one_sweep():
    prog = lower_task(task("rows_softmax_awkward"), "cpp")
    two = _kernel(prog, "k0_0")
    one = _kernel(prog.with_params({"g0.passes": "one", "g0.block": 256}), "k0_0")
    # two-pass: the max loop and the exp loop each walk the whole row; one-pass: both walk
    # the current block of 256 (read from L1 the second time), with a rescaled running sum
    assert "< 1037; ++r" in two and "< 1037; ++r" not in one.split("kw_expf((a")[0]
    assert one.count("kw_expf(") >= 3  # exp of elements, rescale, block correction
    check_lowered(prog.with_params({"g0.passes": "one", "g0.block": 256}))


def test_one_pass_norm_merges_block_statistics():
    prog = lower_task(task("rows_norm_awkward"), "cpp")
    one = prog.with_params({"g0.passes": "one", "g0.block": 256})
    body = _kernel(one, "k0_0")
    assert "blk" in body and "double" in body
    errs = check_lowered(one)
    assert max(errs) < 1e-5


def test_a_full_reduction_runs_on_the_team_and_arg_reductions_vectorise():
    prog = lower_task(task("rows_full"), "cpp")
    assert "#pragma omp parallel for collapse(2) reduction(+:" in _kernel(prog, "k0_0")
    alone = _kernel(prog.with_params({"g0.threads": "one"}), "k0_0")
    assert "omp parallel" not in alone
    arg = lower_task(task("rows_arg"), "cpp")
    assert "#pragma omp simd" in _kernel(arg, "k0_0") and "? " in _kernel(arg, "k0_0")
    check_lowered(arg)


def test_the_parallel_grain_is_tunable():
    prog = lower_task(task("softmax_last"), "cpp")  # 7 x 45: far below every grain
    assert "omp parallel" not in _kernel(prog, "k0_0")
    assert "omp parallel" in _kernel(prog.with_params({"g0.threads": "team"}), "k0_0")
    big = lower_task(task("rows_full"), "cpp")  # 61k elements per sweep
    assert "omp parallel" in _kernel(big, "k0_0")
    assert "omp parallel" not in _kernel(big.with_params({"g0.grain": 131072}), "k0_0")


def test_column_blocks_match_torch_at_every_width_and_are_the_default_where_rows_are_wide():
    """Rows side by side in memory (the reduced dims are not the last): ``column`` rows at a
    time as simd lanes, including a tail block of fewer rows, ties, NaN and -inf."""
    prog = lower_task(task("rows_columns"), "cpp")
    columns = {k: v for k, v in prog.space.items() if k.endswith(".column")}
    assert len(columns) >= 5 and all(v[0] == 0 and 8 in v for v in columns.values())
    defaults = {k: prog.params[k] for k in columns}
    assert 16 in defaults.values() and 8 in defaults.values()  # 45 and 70 wide; 9 wide
    assert "cv < cw" in prog.source
    assert "cv < cw" not in prog.with_params(dict.fromkeys(columns, 0)).source
    for width, threads in [(0, "auto"), (8, "team"), (16, "one"), (32, "team"), (32, "one")]:
        point = {k: min(width, max(v)) for k, v in columns.items()}
        point.update({k.replace(".column", ".threads"): threads for k in columns})
        check_lowered(prog.with_params(point))


def test_a_costly_norm_source_is_computed_once_per_row_where_the_row_fits():
    """Mish and SiLU before a group norm: staged (one activation per element, read back by the
    statistics and the store) at the default point, fused into each sweep at stage=0; the
    layer norm's rows (24,600 floats) are past the stage limit. Every point matches torch."""
    prog = lower_task(task("norm_after_activation"), "cpp")
    stages = sorted(k for k in prog.space if k.endswith(".stage"))
    assert len(stages) == 2  # the two group norms; the layer norm's rows are too long
    kernels = [_kernel(prog, n) for n in ("k0_0", "k0_1", "k0_2")]
    fused = prog.with_params({k: 0 for k in stages})
    fused_kernels = [_kernel(fused, n) for n in ("k0_0", "k0_1", "k0_2")]
    for staged, plain, fn in zip(kernels[:2], fused_kernels[:2], ("kw_tanhf", "kw_expf"),
                                 strict=True):
        assert "stg" in staged and "stg" not in plain
        assert staged.count(f"{fn}(") == 1 < plain.count(f"{fn}(")
    assert "stg" not in kernels[2] and kernels[2] == fused_kernels[2]
    for point in (prog, fused, prog.with_params({k: v for k, v in _all_groups(
            prog, passes="one", block=256).items()})):
        check_lowered(point)
