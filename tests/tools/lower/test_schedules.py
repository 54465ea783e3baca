"""The speed schedules: C++ simd rows and GEMM tiles, SYCL lanes, one exp per softmax element."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from lower_helpers import TASKS, built_pair, check_lowered, task

from kernelwright.spec import Task
from kernelwright.tools.lower import lower_task
from kernelwright.tools.lower.backends.sycl import rows_per_group

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "tasks"


def _kernel(prog, name: str = "k0_0") -> str:
    src = prog.source
    start = src.index(f"void {name}(")
    return src[start:src.index("\n}\n", start)]


@pytest.mark.parametrize("name", ["gemm_epi", "matmul_kn"])
def test_cpp_gemm_tiles_are_correct_in_every_form(name):
    prog = lower_task(task(name), "cpp")
    assert prog.params["g0.form"] == "auto"
    for params in ({}, {"g0.form": "nvec", "g0.rm": 2, "g0.rn": 8},
                   {"g0.form": "kdot", "g0.rm": 4, "g0.rn": 4}, {"g0.rm": 8, "g0.rn": 32}):
        check_lowered(prog.with_params(params))


def test_cpp_gemm_form_follows_the_operand_layout():
    # nn.Linear's weight is N x K: dot products along K; a K x N operand: simd over N
    linear = _kernel(lower_task(task("gemm_epi"), "cpp"))
    assert "omp simd reduction(+:" in linear and "acc[0][s] +=" not in linear
    kn = _kernel(lower_task(task("matmul_kn"), "cpp"))
    assert "acc[0][s] +=" in kn and "reduction(+:" not in kn


def test_softmax_computes_each_exponential_once():
    prog = lower_task(task("softmax_last"), "cpp")
    assert _kernel(prog).count("kw_expf(") == 1  # in the sum pass; the epilogue rescales
    check_lowered(prog)
    log = lower_task(task("softmax_mid"), "cpp")  # log-softmax keeps its own form
    check_lowered(log)


def test_cpp_prelude_math_matches_torch_over_the_whole_range():
    prog = lower_task(task("math_fns"), "cpp")
    assert "kw_expf" in prog.source and "kw_erff" in prog.source
    kernels = _kernel(prog)
    assert "kw_expm1f(" in kernels and "expm1(" not in kernels.replace("kw_expm1f(", "")
    check_lowered(prog, tol=3e-6)  # relative and absolute, inf and nan where torch has them


def test_cpp_small_kernels_skip_the_openmp_team():
    small = lower_task(task("relu_chain"), "cpp")
    assert "omp parallel" not in _kernel(small)
    big = lower_task(Task.from_path(EXAMPLES / "l1_row_softmax.py"), "cpp")  # 4096 x 1000
    assert "#pragma omp parallel for" in _kernel(big)


def test_cpp_rows_vectorise_with_simd_reductions():
    prog = lower_task(task("layernorm3"), "cpp")
    body = _kernel(prog)
    assert "#pragma omp simd reduction(+:" in body
    check_lowered(prog)


@pytest.mark.requires_sycl
def test_sycl_subgroup_rows_are_the_default_and_lanes_stay_correct():
    """A sub-group per contiguous row (its lanes load neighbouring elements), 8 rows per
    work-group where there are rows enough; the one-work-item lanes form is a choice."""
    prog = lower_task(task("softmax_last"), "sycl")
    assert prog.params["g0.strategy"] == "subgroup" and prog.params["g0.sg"] == 16
    assert prog.params["g0.rpg"] == 1  # 7 rows: one per work-group
    assert [rows_per_group(n) for n in (7, 63, 64, 255, 256, 10**6)] == [1, 1, 2, 4, 8, 8]
    check_lowered(prog)
    for lanes in (4, 32):
        check_lowered(prog.with_params({"g0.strategy": "lanes", "g0.wg": 8, "g0.lanes": lanes}))
    mid = lower_task(task("softmax_mid"), "sycl")  # reduces a middle dim: rows in lanes
    assert mid.params["g0.strategy"] == "item"
    check_lowered(mid.with_params({"g0.strategy": "lanes"}))


@pytest.mark.slow
def test_cpp_every_group_declares_who_runs_its_units_and_each_choice_is_correct():
    prog = lower_task(task("softmax_last"), "cpp")
    names = [k for k in prog.space if k.endswith(".threads")]
    assert names and all(prog.space[k] == ["auto", "team", "one"] for k in names)
    sources = set()
    for choice in ("team", "one"):
        variant = prog.with_params({k: choice for k in names})
        check_lowered(variant)
        sources.add(variant.candidate.source.count("omp parallel for"))
    assert len(sources) == 2  # the choice reaches the emitted text


def test_every_parameter_of_the_space_has_a_default():
    """The tuner enqueues complete points (a SYCL budget-8 run died on a row group's
    sub-group parameters, which had none)."""
    missing = {}
    for path in sorted(TASKS.glob("*.py")):
        for backend in ("sycl", "cpp", "cuda"):  # one capture per task, reused
            prog = lower_task(Task.from_path(path), backend)
            if set(prog.space) - set(prog.params):
                missing[path.stem, backend] = sorted(set(prog.space) - set(prog.params))
    assert not missing


@pytest.mark.parametrize("backend", ["cpp", pytest.param("sycl", marks=pytest.mark.requires_sycl)])
def test_literal_clamps_are_one_max_or_min_and_keep_nan_as_torch_does(backend):
    prog = lower_task(task("clamps_nan"), backend)
    kernels = prog.source.split("[EVOLVE_START]")[1]
    # a literal bound takes kw_maxc/kw_minc (one max/min instruction once vectorised); only
    # the NaN bound keeps the two-sided test
    two_sided = [line for line in kernels.splitlines() if "kw_maxn(" in line or "kw_minn(" in line]
    assert two_sided and all("KW_NAN" in line for line in two_sided)
    assert "kw_maxc(" in kernels and "kw_minc(" in kernels
    check_lowered(prog, tol=1e-6)  # nan where torch has nan (equal_nan), inf and zeros
    new, ref = built_pair(prog)
    inputs = task("clamps_nan").load_module().get_inputs()
    got, want = new(*inputs), ref(*inputs)
    real = ~want.isnan()
    assert torch.equal(got[real].signbit(), want[real].signbit())  # relu(-0.0): -0.0


@pytest.mark.parametrize("name", ["scan", "scan_long"])
def test_cpp_scans_walk_lines_in_lockstep_with_the_same_results(name):
    # scan: a cumsum over 6 lines of 37 and a cumprod over 37 neighbouring lines of 6;
    # scan_long: 7 lines of 4001. Widths that do not divide the lines leave a last unit.
    prog = lower_task(task(name), "cpp")
    keys = [k for k in prog.space if k.endswith(".scan_lines")]
    assert keys and all(prog.params[k] > 1 for k in keys)  # lockstep by default here
    line_by_line = prog.with_params({k: 1 for k in keys} | {k.replace("lines", "block"): 0
                                                              for k in keys})
    one, ref = built_pair(line_by_line)
    inputs = task(name).load_module().get_inputs()
    with torch.no_grad():
        want = one(*inputs)
    check_lowered(line_by_line)
    for width in (2, 4, 8):
        wide = line_by_line.with_params({k: width for k in keys})
        body = _kernel(wide)
        assert body.count("double a") >= min(width, 6), body  # a running value per line
        new, _ = built_pair(wide)
        with torch.no_grad():
            got = new(*inputs)
        for g, w in zip(got, want, strict=True):  # each line's sum in the same order: equal
            assert torch.equal(g, w), (name, width)


@pytest.mark.parametrize("backend", ["cpp", pytest.param("sycl", marks=pytest.mark.requires_sycl)])
def test_group_norm_walks_each_channel_as_a_loop_of_its_own(backend):
    prog = lower_task(task("groupnorm_channels"), backend)
    check_lowered(prog)
    # the long group (H x W = 135): no division by H x W, so no gather per element
    assert "/ 135)" not in prog.source


@pytest.mark.parametrize("backend", ["cpp", pytest.param("sycl", marks=pytest.mark.requires_sycl)])
def test_bools_are_bytes_read_as_nonzero_and_their_rows_vectorise(backend):
    """A bool is stored as torch's byte and read as ``!= 0``: g++ left a simd loop that
    loaded ``bool`` scalar ("no vectype")."""
    prog = lower_task(task("bool_bytes"), backend)
    check_lowered(prog)
    assert "bool*" not in prog.candidate.source
