"""Templates: all render under StrictUndefined, carry what they must, and fail loudly otherwise."""

from __future__ import annotations

import jinja2
import pytest

from kernelwright.agents.metaprompter import MetaPrompt
from kernelwright.prompts import render, template_names
from kernelwright.prompts.context import Exemplar, Feedback
from kernelwright.spec.result import EvalResult, Flag, KernelStats, Level, Timing, VariantCheck
from kernelwright.tools.knowledge import retrieve

RESULT = EvalResult(
    task_name="t",
    candidate_id="c1",
    backend="sycl",
    level=Level.CORRECT,
    variants=[VariantCheck(variant="nominal", seeds=3, ok=True, max_abs_error=1e-6)],
    timing=Timing(
        reference_median_s=2e-3, reference_iqr_s=1e-4, candidate_median_s=1e-3,
        candidate_iqr_s=1e-4, repeats=50, speedup=2.0, speedup_low=1.8, speedup_high=2.2,
    ),
    flags=[Flag.SUSPICIOUS_SPEEDUP],
    stats={"k": KernelStats(registers=40, spill_stores=8)},
)


def coder_context(**over):
    ctx = dict(
        sections=MetaPrompt.seed().sections,
        contract="Task t: CONTRACT-TEXT",
        reference_source="class Model: REFERENCE",
        plan="PLAN-TEXT",
        backend="sycl",
        advice=retrieve("elementwise", "sycl", k=3),
        parent=Exemplar(source="PARENT-SRC", summary="correct, 2x"),
        feedback=Feedback.from_result(RESULT, profile={"roofline_fraction": 0.4}),
        inspirations=[Exemplar(source="INSPIRATION-SRC", summary="correct, 1.5x")],
        edit_mode=False,
        machine=None,
        schedule=None,
        attempts=[],
        siblings=[],
    )
    return {**ctx, **over}


def test_templates_are_listed():
    names = set(template_names())
    assert {"planner.j2", "coder.j2", "critic.j2", "meta_prompter.j2", "repair.j2"} <= names


def test_coder_prompt_carries_everything():
    text = render("coder.j2", **coder_context())
    for needle in (
        "CONTRACT-TEXT", "REFERENCE", "PLAN-TEXT", "PARENT-SRC", "INSPIRATION-SRC",
        "SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))",
        "sycl.load_inline(SRC)", "speedup 2x", "suspicious_speedup", "registers=40",
        "spill_stores=8", "roofline_fraction: 0.4", "Fuse the whole chain", "Common Pitfalls",
        "nominal: ok over 3 seeds", "```python code block",
    ):
        assert needle in text, needle
    assert "SEARCH" not in text


@pytest.mark.parametrize(
    ("backend", "needle"),
    [("cuda", "cuda.load_inline(SRC)"), ("cpp", "cpp.load_inline(SRC)"), ("sycl", "get_nd_item")],
)
def test_language_instructions_follow_backend(backend, needle):
    assert needle in render("coder.j2", **coder_context(backend=backend))


def test_coder_edit_mode_asks_for_search_replace():
    text = render("coder.j2", **coder_context(edit_mode=True, sections={}, inspirations=[]))
    assert "<<<<<<< SEARCH" in text and "editable block" in text
    assert "load_inline(SRC)" not in text  # no from-scratch language guide when editing
    assert "Optimisation Philosophy" not in text


def test_missing_variable_raises():
    ctx = coder_context()
    del ctx["plan"]
    with pytest.raises(jinja2.UndefinedError, match="plan"):
        render("coder.j2", **ctx)


def test_feedback_of_a_build_failure():
    failed = EvalResult(
        task_name="t", candidate_id="c", backend="sycl", level=Level.BUILD_FAILED,
        error="error: use of undeclared identifier 'n'",
    )
    feedback = Feedback.from_result(failed, build_log="L" * 5000)
    text = render("coder.j2", **coder_context(feedback=feedback))
    assert "not correct (build_failed)" in text and "undeclared identifier" in text
    assert "L" * 3000 in text and "L" * 3001 not in text  # the log's tail only


def test_planner_critic_meta_and_repair_render():
    advice = retrieve("gemm", "cuda", k=2)
    planner = render(
        "planner.j2", contract="C", reference_source="R", operator_class="gemm", backend="cuda",
        backends=["cuda"], device="H200", allowed_spaces=["custom_kernel"], advice=advice,
        history=["x: 1.2x"], tool_name="PlanReply",
    )
    assert "PlanReply" in planner and "Local-memory tiles" in planner and "H200" in planner
    critic = render(
        "critic.j2", contract=None, reference_source=None, plan="P", machine=None, round=[],
        best_source="S", best_summary="correct, 2x", feedback=Feedback.from_result(RESULT),
        history=[], budget_left=3, advice=[], tool_name="CritiqueReply",
        decisions=["stop", "search"],
    )
    assert "Budget left: 3" in critic and "stop, search" in critic and "## Contract" not in critic
    meta = render(
        "meta_prompter.j2", sections={"common_pitfalls": "- PITFALL"}, child_source="K",
        feedback=Feedback(), child_score="6.5", parent_score=None,
    )
    assert "- PITFALL" in meta and "Score: 6.5, on this scale" in meta
    for want, needle in (("code", "```python"), ("edits", "SEARCH"), ("json", "JSON")):
        assert needle in render("repair.j2", error="E", want=want)
