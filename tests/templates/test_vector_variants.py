"""The explicit-vector variants (``staging="vector"``, ``reduction="vector"``): rules, code
generation, and correctness of non-default points on the example tasks and ragged shapes."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from kernelwright.errors import ConfigError
from kernelwright.templates import GemmSpec, get_template
from kernelwright.templates._codegen import apply_ops
from kernelwright.testing import harness_check as qc
from kernelwright.testing.template_specs import SPECS

EPILOGUE = ["scale", "bias", "relu", "silu", "sigmoid", "tanh", "gelu_tanh", "gelu_erf"]


def _epilogue_reference(v: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    v = torch.relu(v * 2.0 + bias)
    v = torch.tanh(torch.sigmoid(nn.functional.silu(v)))
    return nn.functional.gelu(nn.functional.gelu(v, approximate="tanh"))


def test_vector_ops_use_lane_wise_select_and_a_bias_vector():
    code = apply_ops(["bias", "relu"], "sycl::", col="bvec", vec="vf")
    assert "v = v + bvec;" in code
    assert "sycl::select(vf(0.0f), v, v > 0.0f)" in code
    assert "bias[col]" in apply_ops(["bias"], "sycl::")


def test_vector_staging_is_not_bound_by_the_work_group_tile_rule():
    gemm = get_template("sycl.gemm_tiled")
    big = {"tile_m": 128, "tile_n": 128, "reg_m": 1, "reg_n": 1}
    with pytest.raises(ConfigError, match="exceeds 1024"):
        gemm.validate({**big, "staging": "local"})
    assert gemm.validate({**big, "staging": "vector"})["staging"] == "vector"


def test_vector_render_bakes_its_params_and_has_no_barrier():
    src = get_template("sycl.gemm_tiled").render(
        {"staging": "vector", "reg_m": 4, "reg_n": 1, "vec": 8, "group": 2},
        SPECS["l2_scaled_matmul_softmax"])
    assert "RM = 4, RN = 1, V = 8" in src and "RM, RN, VEC, WG = 4, 1, 8, 2" in src
    assert "group_barrier" not in src and ".transpose(-1, -2)" in src
    dot = get_template("sycl.gemm_tiled").render(
        {"staging": "vector", "nk_kernel": "dot"}, SPECS["l2_scaled_matmul_softmax"])
    assert ".transpose(-1, -2)" not in dot and "KW_GLOBAL(br[s] + k)" in dot


GEMM_POINTS = [
    ("l1_matmul", {"staging": "vector", "reg_m": 1, "reg_n": 1, "vec": 4, "group": 1}),
    ("l1_matmul", {"staging": "vector", "reg_m": 4, "reg_n": 4, "vec": 8, "tile_k": 16}),
    ("l1_matmul", {"staging": "local", "tile_k": 16, "reg_m": 2, "reg_n": 2}),
    ("l2_matmul_bias_gelu", {"staging": "vector", "nk_kernel": "dot", "reg_m": 4, "reg_n": 4}),
    ("l2_matmul_bias_gelu", {"staging": "vector", "reg_m": 2, "reg_n": 1, "vec": 8}),
    ("l2_scaled_matmul_softmax", {"staging": "vector", "nk_kernel": "dot", "reg_m": 8,
                                  "reg_n": 2, "vec": 16, "group": 16}),
    ("l2_scaled_matmul_softmax", {"staging": "vector", "reg_m": 2, "reg_n": 4, "vec": 4}),
]
REDUCE_POINTS = [
    {"reduction": "vector", "accumulators": 1, "wg_size": 1, "vec": 4},
    {"reduction": "vector", "accumulators": 8, "wg_size": 16, "rows_per_group": 4},
    {"reduction": "group", "accumulators": 1},
]


@pytest.mark.requires_sycl
@pytest.mark.slow
@pytest.mark.parametrize(("task", "params"), GEMM_POINTS)
def test_gemm_non_default_point_is_correct_on_every_variant(task: str, params: dict, harness):
    result = harness.check(task, get_template("sycl.gemm_tiled").render(params, SPECS[task]))
    assert result.correct, result.error


@pytest.mark.requires_sycl
@pytest.mark.slow
@pytest.mark.parametrize("params", REDUCE_POINTS)
def test_row_reduce_non_default_point_is_correct(params: dict, harness):
    src = get_template("sycl.row_reduce_wg").render(params, SPECS["l1_sum_reduction"])
    result = harness.check("l1_sum_reduction", src)
    assert result.correct, result.error


NORM_POINTS = [
    ("l1_row_softmax", {"reduction": "vector", "fast_math": True, "wg_size": 1, "vec": 4}),
    ("l1_layernorm", {"reduction": "vector", "vec": 4, "rows_per_group": 4}),
    ("l1_rmsnorm", {"reduction": "vector", "vec": 8, "wg_size": 16}),
    ("l2_add_layernorm", {"reduction": "group", "wg_size": 16}),
]


@pytest.mark.requires_sycl
@pytest.mark.slow
@pytest.mark.parametrize(("task", "params"), NORM_POINTS)
def test_rowwise_norm_non_default_point_is_correct(task: str, params: dict, harness):
    result = harness.check(task, get_template("sycl.rowwise_norm_wg").render(params, SPECS[task]))
    assert result.correct, result.error


TRANSPOSE_POINTS = [
    {"staging": "vector", "vec": 4, "group": 1},
    {"staging": "vector", "vec": 8, "group": 2},
    {"staging": "local", "tile": 32, "block_rows": 4},
]


def test_transpose_vector_staging_skips_the_tile_rule():
    t = get_template("sycl.transpose_tiled")
    assert t.validate({"staging": "vector", "tile": 64, "block_rows": 2})["tile"] == 64


@pytest.mark.requires_sycl
@pytest.mark.slow
@pytest.mark.parametrize("params", TRANSPOSE_POINTS)
def test_transpose_non_default_point_is_correct(params: dict, harness):
    src = get_template("sycl.transpose_tiled").render(params, SPECS["l1_transpose"])
    result = harness.check("l1_transpose", src)
    assert result.correct, result.error


@pytest.mark.requires_sycl
@pytest.mark.slow
@pytest.mark.parametrize("layout", ["kn", "nk"])
@pytest.mark.parametrize("params", [{}, {"reg_n": 1, "vec": 4}, {"nk_kernel": "dot"}])
def test_vector_epilogue_chain_matches_torch_on_ragged_sizes(layout: str, params: dict):
    spec = GemmSpec(init_args="n: int", init_body=["self.bias = nn.Parameter(torch.randn(n))"],
                    inputs=["a", "b"], a="a", b="b", b_layout=layout, epilogue=EPILOGUE,
                    scale="2.0", bias="self.bias")
    src = get_template("sycl.gemm_tiled").render({"staging": "vector", **params}, spec)
    torch.manual_seed(0)
    model = qc.load_source(src).ModelNew(21)
    a, b = torch.randn(13, 37), torch.randn(37, 21)
    got = model(a, b if layout == "kn" else b.t().contiguous())
    want = _epilogue_reference(a @ b, model.bias.detach())
    torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)


@pytest.mark.requires_sycl
@pytest.mark.slow
@pytest.mark.parametrize("vec", [4, 16])
def test_transpose_vector_blocks_handle_batches_and_ragged_edges(vec: int):
    src = get_template("sycl.transpose_tiled").render({"vec": vec}, SPECS["l1_transpose"])
    model = qc.load_source(src).ModelNew()
    for shape in [(3, 129, 77), (2, 5, 3), (33, 16)]:
        x = torch.randn(shape)
        assert torch.equal(model(x), x.transpose(-1, -2).contiguous()), shape
