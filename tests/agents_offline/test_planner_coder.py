"""The offline team's planner, coder and critic on the example tasks (no LLM)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.agents.coder import LoweredCoder
from kernelwright.agents.critic import RuleCritic
from kernelwright.agents.lowered import SourceCache
from kernelwright.agents.planner import LoweringPlanner
from kernelwright.spec import ImplementationSpace, Task, derive_contract
from kernelwright.spec.opclass import OperatorClass
from kernelwright.spec.plan import Action, Decision, History, Plan, Profile, Roofline

TASKS = Path(__file__).resolve().parents[2] / "examples" / "tasks"

EXPECTED = {
    "l1_gelu": (OperatorClass.ELEMENTWISE, ImplementationSpace.CUSTOM_KERNEL),
    "l1_row_softmax": (OperatorClass.ROWWISE_NORM, ImplementationSpace.CUSTOM_KERNEL),
    "l2_matmul_bias_gelu": (OperatorClass.GEMM, ImplementationSpace.VENDOR_LIBRARY),
    "l2_gemm_bias_swish_vendor": (OperatorClass.GEMM, ImplementationSpace.VENDOR_LIBRARY),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_examples_plan_around_their_lowered_program(name):
    task = Task.from_path(TASKS / f"{name}.py")
    def vendor_wins(prog):  # a stub timer: the library call is faster where it is legal
        vendor = any(v == "vendor" for k, v in prog.params.items() if k.endswith(".impl"))
        return (0.5 if vendor else 1.0), 0.0

    plan = LoweringPlanner(timer=vendor_wins).plan(task, derive_contract(task), "sycl")
    assert (plan.operator_class, plan.implementation_space) == EXPECTED[name]
    assert plan.sources == ["lowered"] and plan.flops > 0 and plan.min_bytes > 0


def test_a_model_without_init_gets_a_lowered_candidate():
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "tasks" / "gelu.py"
    task = Task.from_path(fixture)
    contract = derive_contract(task)
    cache = SourceCache()
    plan = LoweringPlanner(cache=cache).plan(task, contract, "cpp")
    candidates = LoweredCoder(seed=0, cache=cache).propose(task, contract, plan, _history([]), 1)
    assert candidates, plan.rationale
    assert "class ModelNew" in candidates[0].source and candidates[0].origin == "lowered"
    compile(candidates[0].source, "<candidate>", "exec")  # a whole module


def _history(profiles, decision=None, round_sizes=None):
    best = max((p for p in profiles if p.correct), key=lambda p: p.speedup, default=None)
    return History(
        round=len(round_sizes or []),
        budget=20,
        spent=len(profiles),
        profiles=profiles,
        round_sizes=round_sizes or [],
        best=best,
        last_decision=decision,
    )


PLAN = Plan(operator_class=OperatorClass.ELEMENTWISE,
            implementation_space=ImplementationSpace.CUSTOM_KERNEL, backend="sycl",
            strategy="lowered program", rationale="test", sources=["lowered"],
            flops=1e6, min_bytes=1 << 20)


def test_critic_rules():
    critic = RuleCritic(patience=2)
    plan = PLAN
    good = Profile(candidate_id="a", correct=True, level=5, speedup=2.0, origin="lowered",
                   source="lowered")
    assert critic.decide(plan, _history([good], None, [1]), 0).action == Action.VARY_PARAMS
    spent = _history([good], None, [1]).model_copy(update={"budget": 1})
    assert critic.decide(plan, spent, 0).action == Action.STOP
    at_roof = good.model_copy(
        update={"roofline": Roofline(bound="memory", bound_time_s=1, fraction=0.95)}
    )
    decision = critic.decide(plan, _history([at_roof], None, [1]), 0)
    assert decision.action == Action.STOP and "roofline" in decision.reason
    above = at_roof.model_copy(update={"roofline": Roofline(bound="memory", bound_time_s=1,
                                                            fraction=1.4)})
    assert critic.decide(plan, _history([above], None, [1]), 0).action != Action.STOP
    worse = [good] + [
        Profile(candidate_id=f"w{i}", correct=True, level=5, speedup=1.0, origin="lowered",
                source="lowered")
        for i in range(2)
    ]
    stale = critic.decide(plan, _history(worse, None, [1, 1, 1]), 0)
    assert stale.action == Action.SEARCH and "every source tried" in stale.reason
    two = plan.model_copy(update={"sources": ["lowered", "other"]})
    assert critic.decide(two, _history(worse, None, [1, 1, 1]), 0).action == (
        Action.SWITCH_STRATEGY
    )
    wrong = Profile(candidate_id="x", correct=False, level=2)
    after = critic.decide(plan, _history([good, wrong], Decision(action=Action.VARY_PARAMS,
                                                                 reason="t"), [1, 1]), 0)
    assert after.action == Action.SWITCH_STRATEGY
    timed = RuleCritic(time_limit_s=10).decide(plan, _history([good], None, [1]), 11)
    assert timed.action == Action.STOP and "time limit" in timed.reason
