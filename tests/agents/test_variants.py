"""The coder edits one block (nominal kernels, launch sizes); every variant is written from it."""

from __future__ import annotations

import types
from pathlib import Path

import pytest
import torch

from kernelwright.agents.attempts import key_error_line, short_diff
from kernelwright.agents.coder import apply_to_view
from kernelwright.agents.variants import view_of
from kernelwright.errors import LaunchError, ReplyFormatError
from kernelwright.prompts import Edit
from kernelwright.spec import Task
from kernelwright.tools.lower import lower_task
from kernelwright.tools.lower.launch_config import launch_plans

SOFTMAX = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "l1_row_softmax.py"


@pytest.fixture(scope="module")
def task():
    return Task.from_path(SOFTMAX)


def test_the_view_shows_one_copy_with_named_sizes_and_the_launch_sizes(task):
    source = lower_task(task, "sycl").candidate.source
    view = view_of(source)
    assert view is not None and view.variants == 3
    assert "k0_0" in view.text and "k1_0" not in view.text and "k2_0" not in view.text
    # the plan's work-group size, editable: 8 rows (sub-groups of 16) per work-group
    assert "#define KW_LOCAL_k0_0 128" in view.text
    assert view.values == {"KW_S0": (4096, 2049, 1023)} and "u >= KW_S0" in view.text
    assert len(view.text) < len(source) / 3
    assert view_of(view.module(view.text)).text == view.text  # stable across rounds


def test_an_edit_of_the_nominal_kernel_writes_every_variant(task):
    source = lower_task(task, "cpp").candidate.source
    edited = apply_to_view(source, [Edit(search="schedule(static)", replace="schedule(dynamic)")])
    assert edited.count("schedule(dynamic)") == 3 and "schedule(static)" not in edited
    for name, rows in (("k0_0", 4096), ("k1_0", 2049), ("k2_0", 1023)):
        body = edited.split(f"void {name}(")[1].split('extern "C"')[0]
        assert f"u < {rows};" in body  # each variant keeps its own size
    assert short_diff(source, edited).count("schedule(dynamic)") == 1  # one copy in diffs
    mod = types.ModuleType("cand")
    exec(compile(edited, "cand.py", "exec"), mod.__dict__)  # noqa: S102 - our own module
    model = mod.ModelNew()
    ref = task.module().Model()
    for rows in (4096, 2049, 1023):  # the contract's shape variants
        x = torch.randn(rows, 1000)
        torch.testing.assert_close(model(x), ref(x))


def test_a_name_that_is_not_a_shape_constant_is_a_clear_reply_error(task):
    source = lower_task(task, "cpp").candidate.source
    with pytest.raises(ReplyFormatError, match="KW_S7 is not a shape constant.*KW_S0"):
        apply_to_view(source, [Edit(search="u < KW_S0;", replace="u < KW_S7;")])


def test_a_cooperative_kernel_strides_by_its_launch_size(task):
    prog = lower_task(task, "cuda", {"g0.strategy": "group", "g0.wg": 64})
    view = view_of(prog.candidate.source)
    assert "#define KW_LOCAL_k0_0 64" in view.text
    assert "__launch_bounds__(KW_LOCAL_k0_0)" in view.text
    assert "+= KW_LOCAL_k0_0)" in view.text and "kw_smem_raw[KW_LOCAL_k0_0]" in view.text
    new = apply_to_view(prog.candidate.source, [
        Edit(search="#define KW_LOCAL_k0_0 64", replace="#define KW_LOCAL_k0_0 128")])
    plans = launch_plans(new.split('SOURCE = r"""')[1], prog._emit()[1])
    steps = [p["steps"][0] for p in plans.values()]
    assert all(s["local"] == 128 and s["global"] == s["units"] * 128 for s in steps)


@pytest.mark.requires_sycl
def test_an_edited_launch_size_keeps_a_cooperative_row_loop_correct(task):
    """The row loop's whole work-groups and its tail are written with the work-group size:
    96 does not divide the 1000-long rows, so the tail must follow the edit."""
    prog = lower_task(task, "sycl", {"g0.strategy": "group", "g0.wg": 64})
    view = view_of(prog.candidate.source)
    assert "1000 / KW_LOCAL_k0_0 * KW_LOCAL_k0_0" in view.text
    edited = apply_to_view(prog.candidate.source, [
        Edit(search="#define KW_LOCAL_k0_0 64", replace="#define KW_LOCAL_k0_0 96")])
    mod = types.ModuleType("cand")
    exec(compile(edited, "cand.py", "exec"), mod.__dict__)  # noqa: S102 - our own module
    model, ref = mod.ModelNew(), task.module().Model()
    for rows in (4096, 1023):
        x = torch.randn(rows, 1000)
        torch.testing.assert_close(model(x), ref(x))


PLANS = {"eval|10": {"steps": [{"kernel": "k0_0", "args": [], "global": 104, "local": 8,
                                "units": 100}]},
         "eval|5": {"steps": [{"kernel": "k1_0", "args": [], "global": 8, "local": 8,
                               "units": 5}]}}


def test_the_launcher_reads_the_launch_sizes_and_rejects_bad_ones():
    plans = launch_plans("#define KW_LOCAL_k0_0 32\n", PLANS)
    assert [p["steps"][0]["local"] for p in plans.values()] == [32, 32]
    assert [p["steps"][0]["global"] for p in plans.values()] == [128, 32]
    assert launch_plans("// none\n", PLANS) is PLANS
    with pytest.raises(LaunchError, match="KW_LOCAL_k0_0 is '0'.*from 1 to 1024"):
        launch_plans("#define KW_LOCAL_k0_0 0\n", PLANS)
    with pytest.raises(LaunchError, match="KW_LOCAL_k0_0 is 'big'"):
        launch_plans("#define KW_LOCAL_k0_0 big\n", PLANS)
    with pytest.raises(LaunchError, match="KW_LOCAL_k0_9 names no kernel; the kernels are k0_0"):
        launch_plans("#define KW_LOCAL_k0_9 64\n", PLANS)


def test_a_bad_launch_size_reaches_the_attempt_history_as_its_error():
    try:
        launch_plans("#define KW_LOCAL_k0_0 4096\n", PLANS)
    except LaunchError as exc:
        log = ('Traceback (most recent call last):\n  File "/x/kernelwright/tools/lower/'
               f'runtime.py", line 70, in __init__\nkernelwright.errors.LaunchError: {exc}')
    line = key_error_line(log)
    assert line is not None and "KW_LOCAL_k0_0 is '4096'" in line and "runtime.py" not in line
