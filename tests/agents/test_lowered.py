"""Agents over the lowering compiler: the planner proposes the lowered program, the offline
coder moves through its schedule space, the LLM coder's seed is the lowered kernel source, and a
reference that does not lower gets a plan that says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.agents.coder import LoweredCoder
from kernelwright.agents.critic import RuleCritic
from kernelwright.agents.lowered import SourceCache
from kernelwright.agents.planner import LoweringPlanner
from kernelwright.agents.profiler import source_of
from kernelwright.prompts.formats import evolve_regions
from kernelwright.spec import ImplementationSpace, Task, derive_contract
from kernelwright.spec.opclass import OperatorClass
from kernelwright.spec.plan import Action, Decision, History, Plan, Profile

TASKS = Path(__file__).parents[1] / "tools" / "lower" / "tasks"

UNLOWERABLE = """\
import torch
from torch import nn
{spaces}
class Model(nn.Module):
    def forward(self, x):
        return torch.sort(x, dim=-1).values
def get_inputs():
    return [torch.randn(16, 8)]
"""


@pytest.fixture(scope="module")
def setup():
    task = Task.from_path(TASKS / "gemm_epi.py")
    contract = derive_contract(task)
    cache = SourceCache()
    plan = LoweringPlanner(cache=cache).plan(task, contract, "cpp")
    return task, contract, plan, cache


def _history(profiles, round_=1, decision=None):
    best = profiles[0] if profiles else None
    return History(round=round_, budget=8, spent=len(profiles), profiles=profiles, best=best,
                   last_decision=decision)


def test_planner_proposes_the_lowered_program_and_counts_its_work(setup):
    _, _, plan, _ = setup
    assert plan.sources == ["lowered"]
    assert plan.operator_class == OperatorClass.GEMM
    assert "gemm" in plan.strategy and "k0_0" in plan.rationale
    assert plan.flops > 0 and plan.min_bytes > 0  # the roofline has work to divide
    assert "bound" in plan.rationale


def test_coder_starts_from_the_default_schedule_then_moves(setup):
    task, contract, plan, cache = setup
    coder = LoweredCoder(seed=0, cache=cache)
    first = coder.propose(task, contract, plan, _history([], 0), 1)
    assert len(first) == 1 and first[0].origin == "lowered"
    source = cache.get(task, contract, "cpp")
    assert first[0].params == source.default_params()
    assert source_of(first[0].origin, plan) == "lowered"
    done = Profile(candidate_id=first[0].id, correct=True, level=5, speedup=1.0,
                   origin="lowered", source="lowered", params=dict(first[0].params))
    nxt = coder.propose(task, contract, plan, _history([done]), 4)
    assert len(nxt) == 4
    assert first[0].id not in {c.id for c in nxt}
    for cand in nxt:  # each differs from the best schedule in a declared parameter
        changed = {k for k, v in cand.params.items() if first[0].params.get(k) != v}
        assert changed and changed <= set(source.space())
    again = coder.propose(task, contract, plan, _history([done]), 4)
    assert [c.id for c in again] == [c.id for c in nxt]  # deterministic for resume


def test_switch_strategy_flips_discrete_choices_first(setup):
    task, contract, _, cache = setup
    plan = LoweringPlanner(cache=cache).plan(task, contract, "sycl")  # has a launch choice
    coder = LoweredCoder(seed=0, cache=cache)
    base = cache.get(task, contract, "sycl").default_params()
    first = coder.propose(task, contract, plan, _history([], 0), 1)[0]
    done = Profile(candidate_id=first.id, correct=True, level=5, speedup=1.0,
                   origin="lowered", source="lowered", params=dict(first.params))
    switch = Decision(action=Action.SWITCH_STRATEGY, reason="test")
    nxt = coder.propose(task, contract, plan, _history([done], 1, switch), 1)
    changed = [k for k, v in nxt[0].params.items() if base.get(k) != v]
    assert len(changed) == 1
    assert changed[0] == "launch" or changed[0].endswith((".impl", ".strategy"))


def test_llm_seed_is_the_lowered_source_with_evolve_blocks(setup):
    task, contract, plan, cache = setup
    seed = LoweredCoder(cache=cache).seed_candidate(task, contract, plan)
    assert seed is not None and "class ModelNew" in seed.source
    assert evolve_regions(seed.source)


def test_old_plans_and_profiles_load():
    plan = Plan.model_validate({
        "operator_class": "gemm", "implementation_space": "custom_kernel", "backend": "sycl",
        "strategy": "s", "rationale": "r", "templates": ["lowered", "sycl.gemm_tiled"],
        "op_spec": {"a": "x"},
    })
    assert plan.sources == []
    old = Profile.model_validate({"candidate_id": "c", "correct": True, "level": 5,
                                  "template": "template:lowered"})
    assert old.source == "lowered" and old.origin == "lowered"
    assert Action("switch_template") == Action.SWITCH_STRATEGY


@pytest.mark.parametrize("allowed, space", [
    ('ALLOWED_SPACES = ["custom_kernel"]', ImplementationSpace.CUSTOM_KERNEL),
    ("", ImplementationSpace.FRAMEWORK),  # the default allows every space
    ('ALLOWED_SPACES = ["custom_kernel", "framework"]', ImplementationSpace.FRAMEWORK),
])
def test_a_reference_that_does_not_lower_gets_a_plan_that_says_so(tmp_path, allowed, space):
    path = tmp_path / f"sorted_{len(allowed)}.py"
    path.write_text(UNLOWERABLE.format(spaces=allowed))
    task = Task.from_path(path)
    contract = derive_contract(task)
    plan = LoweringPlanner().plan(task, contract, "cpp")
    assert plan.sources == [] and plan.implementation_space == space
    assert "does not lower" in plan.strategy and "sort" in plan.rationale
    assert plan.min_bytes > 0  # the work is still counted
    coder = LoweredCoder()
    assert coder.propose(task, contract, plan, _history([], 0), 2) == []
    assert coder.seed_candidate(task, contract, plan) is None
    # With nothing to propose the run stops after its idle rounds, saying why.
    idle = History(round=3, budget=8, spent=0, profiles=[], round_sizes=[0, 0, 0])
    decision = RuleCritic(max_idle_rounds=3).decide(plan, idle, 0)
    assert decision.action == Action.STOP and "does not lower" in decision.reason
