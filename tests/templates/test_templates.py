"""Templates: parameter validation, op specs, rendering, and correctness on the example tasks."""

from __future__ import annotations

import ast

import jinja2
import pytest
from pydantic import ValidationError

from kernelwright.errors import ConfigError
from kernelwright.templates import (
    TEMPLATES,
    ElementwiseSpec,
    GemmSpec,
    RowwiseNormSpec,
    get_template,
    templates_for,
)
from kernelwright.templates._jinja import environment
from kernelwright.testing import harness_check as qc
from kernelwright.testing.template_specs import SPECS

PAIRS = [(task, t.name) for task, spec in SPECS.items()
         for t in templates_for(spec.operator_class)]


def test_every_operator_class_has_a_sycl_and_a_cpp_template():
    for cls in ("elementwise", "rowwise_norm", "reduction", "layout", "gemm"):
        assert {t.backend for t in templates_for(cls)} == {"sycl", "cpp"}, cls
    assert [t.backend for t in templates_for("gemm", "cpp")] == ["cpp"]


def test_every_example_task_has_an_op_spec_or_is_lowered_only():
    """Template-era tasks have a spec; the vendor L2 tasks (convolutions, norms over GEMMs) are
    served by the lowering alone."""
    assert set(SPECS) <= set(qc.TASKS)
    lowered_only = set(qc.TASKS) - set(SPECS)
    assert all(name.endswith("_vendor") for name in lowered_only), lowered_only


def test_unknown_template_lists_the_choices():
    with pytest.raises(ValueError, match="sycl.gemm_tiled"):
        get_template("sycl.nope")


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_defaults_validate_and_each_param_rejects_a_value_out_of_range(name: str):
    t = get_template(name)
    assert t.validate(None) == t.default_params()
    for param in t.params:
        bad = "bogus" if isinstance(param.default, int) else 3  # bool is an int too
        with pytest.raises(ConfigError, match=param.name):
            t.validate({param.name: bad})
        assert all(t.validate({param.name: c})[param.name] == c for c in param.choices
                   if not t.rules)


def test_a_bool_is_not_accepted_for_an_int_parameter():
    with pytest.raises(ConfigError, match="wg_size"):
        get_template("sycl.elementwise_vec").validate({"wg_size": True})


def test_validate_names_unknown_params_and_broken_rules():
    gemm = get_template("sycl.gemm_tiled")
    with pytest.raises(ConfigError, match="no parameter.*tile_q"):
        gemm.validate({"tile_q": 4})
    with pytest.raises(ConfigError, match="exceeds 1024"):
        gemm.validate({"tile_m": 128, "tile_n": 128, "reg_m": 1, "reg_n": 1, "staging": "local"})
    local = {"staging": "local"}
    with pytest.raises(ConfigError, match="block_rows=16"):
        get_template("sycl.transpose_tiled").validate({**local, "tile": 8, "block_rows": 16})
    with pytest.raises(ConfigError, match="more than 1024"):
        get_template("sycl.transpose_tiled").validate({**local, "tile": 64, "block_rows": 2})


def test_render_rejects_an_op_spec_of_another_class():
    with pytest.raises(ConfigError, match="templates_for"):
        get_template("sycl.gemm_tiled").render(None, SPECS["l1_gelu"])


def test_op_specs_check_their_references():
    with pytest.raises(ValidationError, match="bias"):
        ElementwiseSpec(ops=["bias"])
    with pytest.raises(ValidationError, match="not a forward input"):
        RowwiseNormSpec(kind="layernorm", residual="r")
    with pytest.raises(ValidationError, match="affine"):
        RowwiseNormSpec(kind="softmax", weight="self.weight")
    with pytest.raises(ValidationError, match="not a forward input"):
        GemmSpec(a="q")


def test_templates_render_with_strict_undefined():
    env = environment()
    assert env.undefined is jinja2.StrictUndefined
    with pytest.raises(jinja2.UndefinedError):
        env.get_template("sycl/gemm.py.j2").render(p={}, spec=SPECS["l1_matmul"],
                                                   template=get_template("sycl.gemm_tiled"))


@pytest.mark.parametrize(("task", "name"), PAIRS)
def test_default_render_is_a_python_module_with_model_new(task: str, name: str):
    t = get_template(name)
    candidate = t.candidate(None, SPECS[task])
    tree = ast.parse(candidate.source)
    classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
    assert classes == ["ModelNew"]
    assert candidate.backend == t.backend
    assert candidate.params == t.default_params()
    assert f"backends import {t.backend}" in candidate.source


def test_render_bakes_params_into_the_kernel():
    spec = SPECS["l1_matmul"]
    t = get_template("sycl.gemm_tiled")
    a = t.render({"staging": "local", "tile_m": 64, "reg_m": 4}, spec)
    assert "constexpr int TM = 64" in a and "RM = 4" in a
    assert a != t.render(None, spec)


def test_elementwise_chain_is_generated_in_order():
    spec = ElementwiseSpec(ops=["scale", "bias", "silu"], scale="2.0", bias="self.b",
                           init_body=["self.b = nn.Parameter(torch.zeros(8))"])
    src = get_template("cpp.elementwise_omp").render(None, spec)
    assert src.index("v * scale") < src.index("bias[col]") < src.index("std::exp(-v)")


@pytest.mark.requires_sycl
@pytest.mark.slow
@pytest.mark.parametrize(("task", "name"), [p for p in PAIRS if p[1].startswith("sycl.")])
def test_sycl_default_candidate_is_correct(task: str, name: str, harness):
    result = harness.check(task, get_template(name).render(None, SPECS[task]))
    assert result.correct, result.error


@pytest.mark.slow
@pytest.mark.parametrize(("task", "name"), [p for p in PAIRS if p[1].startswith("cpp.")])
def test_cpp_default_candidate_is_correct(task: str, name: str, harness):
    result = harness.check(task, get_template(name).render(None, SPECS[task]))
    assert result.correct, result.error


@pytest.mark.slow
def test_cpp_fast_math_variant_is_still_correct(harness):
    t = get_template("cpp.rowwise_norm_omp")
    source = t.render({"fast_math": True}, SPECS["l1_row_softmax"])
    result = harness.check("l1_row_softmax", source)
    assert result.correct, result.error
