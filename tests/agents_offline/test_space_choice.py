"""The planner chooses each fusion group's implementation space by measurement (stub timers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.agents.lowered import SourceCache
from kernelwright.agents.planner import LoweringPlanner
from kernelwright.spec import ImplementationSpace, Task, derive_contract
from kernelwright.tools.lower.choose import choose_spaces

TASKS = Path(__file__).resolve().parents[2] / "examples" / "tasks"
GEMM_GELU = TASKS / "l2_matmul_bias_gelu.py"


def timer_favouring(winner: str):
    """Seconds per forward by option: ``winner`` 1 ms, the others 3 ms; library 40%."""
    seen = []

    def timer(prog):
        impl, form = prog.params.get("g0.impl"), prog.params.get("g0.vform")
        label = "kernel" if impl == "kernel" else form
        seen.append(label)
        total = 1e-3 if label == winner else 3e-3
        return total, (0.4 * total if impl == "vendor" else 0.0)

    timer.seen = seen
    return timer


@pytest.mark.parametrize(("winner", "space", "form"), [
    ("kernel", ImplementationSpace.CUSTOM_KERNEL, "our kernel"),
    ("fused", ImplementationSpace.VENDOR_LIBRARY, "oneDNN call with bias/activation post-ops"),
    ("blas", ImplementationSpace.VENDOR_LIBRARY, "library call + our epilogue kernel"),
])
def test_the_timer_decides_the_space_of_a_gemm_group(winner, space, form):
    task = Task.from_path(GEMM_GELU)
    contract = derive_contract(task)
    cache = SourceCache()
    timer = timer_favouring(winner)
    plan = LoweringPlanner(cache=cache, timer=timer).plan(task, contract, "cpp")
    assert set(timer.seen) == {"kernel", "fused", "blas"}  # every legal option was timed
    (group,) = plan.groups
    assert (group.group, group.kind, group.space, group.form) == ("g0", "gemm", space, form)
    assert group.timings_ms[f"{space.value} ({form})"] == 1.0 and len(group.timings_ms) == 3
    assert "fastest of 3" in group.why
    assert plan.implementation_space == space
    assert plan.own_kernel_share == pytest.approx(1.0 if winner == "kernel" else 0.6)
    text = cache.get(task, contract, "cpp").program.describe()
    assert "fastest of 3" in text and "MFLOP is past" not in text  # no stale heuristic note
    params = cache.get(task, contract, "cpp").default_params()  # the coder starts from it
    assert params["g0.impl"] == ("kernel" if winner == "kernel" else "vendor")
    if winner != "kernel":
        assert params["g0.vform"] == winner


def test_custom_only_contract_measures_nothing():
    task = Task.from_path(GEMM_GELU)
    contract = derive_contract(task).narrowed([ImplementationSpace.CUSTOM_KERNEL])

    def never(prog):
        raise AssertionError("nothing to choose, nothing to time")

    plan = LoweringPlanner(timer=never).plan(task, contract, "cpp")
    assert [(g.space, g.timings_ms) for g in plan.groups] == [
        (ImplementationSpace.CUSTOM_KERNEL, {})]
    assert "vendor_library" in plan.groups[0].why and plan.own_kernel_share == 1.0


def test_the_default_timer_measures_a_real_program():
    from kernelwright.tools.lower import lower_task

    prog = lower_task(Task.from_path(TASKS / "l1_matmul.py"), "cpp")
    params, groups, share = choose_spaces(prog)
    assert groups[0].timings_ms and all(v > 0 for v in groups[0].timings_ms.values())
    assert share is not None and 0.0 <= share <= 1.0
    if params["g0.impl"] == "vendor":  # a lone library call: little time in our code
        assert share < 0.5


def test_in_process_timing_stores_outputs_as_the_harness_does():
    # a result left channels-last is copied into a dense buffer on every timed call, as the
    # harness's runner copies it into its output arena: the planner pays that conversion too
    import torch

    from kernelwright.tools.lower.choose import _Storing

    class ChannelsLast(torch.nn.Module):
        def forward(self, x):
            return (2 * x).contiguous(memory_format=torch.channels_last), x.sum()

    x = torch.randn(2, 3, 4, 5)
    stored = _Storing(ChannelsLast(), [x])
    for slot in stored.slots:
        slot.zero_()
    value = stored(3 * x)
    assert value[0].is_contiguous(memory_format=torch.channels_last)  # returned as it was
    dense, total = stored.slots
    assert dense.is_contiguous() and torch.equal(dense, 6 * x)
    assert torch.equal(total, (3 * x).sum())


def test_alike_groups_are_chosen_once_and_set_together():
    from kernelwright.tools.lower import lower_task

    path = Path(__file__).resolve().parents[1] / "tools" / "lower" / "tasks" / "alike_layers.py"
    prog = lower_task(Task.from_path(path), "cpp")
    gemms = [f"g{i}" for i, g in enumerate(prog.variants[0].sched.groups) if g.kind == "gemm"]
    assert len(gemms) == 4
    steps, head = gemms[:3], gemms[3]
    trials = []

    def timer(p):  # the steps are fastest as our kernel, the head as the fused library call
        trials.append(p.params)
        assert len({p.params[f"{g}.impl"] for g in steps}) == 1  # set together in each trial
        total = 1e-3
        total += 0.0 if p.params[f"{steps[0]}.impl"] == "kernel" else 1e-3
        fused = (p.params[f"{head}.impl"], p.params.get(f"{head}.vform")) == ("vendor", "fused")
        total += 0.0 if fused else 1e-3
        return total, 0.0

    params, groups, _ = choose_spaces(prog, timer)
    # each class's three options once (a setting timed before is not timed again); group by
    # group it would be 4 x 3
    assert len(trials) <= 3 + 3
    by_name = {g.group: g for g in groups}
    assert [by_name[g].form for g in steps] == ["our kernel"] * 3
    assert "3 alike groups" in by_name[steps[1]].why
    assert by_name[head].form == "oneDNN call with bias/activation post-ops"
    assert "alike" not in by_name[head].why
    assert all(params[f"{g}.impl"] == "kernel" for g in steps)
