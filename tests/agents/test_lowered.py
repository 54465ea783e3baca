"""Agents over the lowering compiler: the planner proposes the lowered program, the offline
coder moves through its schedule space, the LLM coder's seed is the lowered kernel source."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.agents.lowered import LoweredCoder, LoweringPlanner, SourceCache
from kernelwright.prompts.formats import evolve_regions
from kernelwright.spec import Task, derive_contract
from kernelwright.spec.opclass import OperatorClass
from kernelwright.spec.plan import History, Profile

TASKS = Path(__file__).parents[1] / "tools" / "lower" / "tasks"


@pytest.fixture(scope="module")
def setup():
    task = Task.from_path(TASKS / "gemm_epi.py")
    contract = derive_contract(task)
    cache = SourceCache()
    plan = LoweringPlanner(cache=cache).plan(task, contract, "cpp")
    return task, contract, plan, cache


def _history(profiles, round_=1):
    best = profiles[0] if profiles else None
    return History(round=round_, budget=8, spent=len(profiles), profiles=profiles, best=best)


def test_planner_proposes_the_lowered_program(setup):
    _, _, plan, _ = setup
    assert plan.templates == ["lowered"]
    assert plan.operator_class == OperatorClass.GEMM
    assert "gemm" in plan.strategy and "k0_0" in plan.rationale


def test_coder_starts_from_the_default_schedule_then_moves(setup):
    task, contract, plan, cache = setup
    coder = LoweredCoder(seed=0, cache=cache)
    first = coder.propose(task, contract, plan, _history([], 0), 1)
    assert len(first) == 1 and first[0].origin == "template:lowered"
    source = cache.get(task, contract, "cpp")
    assert first[0].params == source.default_params()
    done = Profile(candidate_id=first[0].id, correct=True, level=5, speedup=1.0,
                   template="template:lowered", params=dict(first[0].params))
    nxt = coder.propose(task, contract, plan, _history([done]), 4)
    assert len(nxt) == 4
    assert first[0].id not in {c.id for c in nxt}
    for cand in nxt:  # each differs from the best schedule in a declared parameter
        changed = {k for k, v in cand.params.items() if first[0].params.get(k) != v}
        assert changed and changed <= set(source.space())


def test_llm_seed_is_the_lowered_source_with_evolve_blocks(setup):
    task, contract, plan, cache = setup
    seed = LoweredCoder(cache=cache).seed_candidate(task, contract, plan)
    assert seed is not None and "class ModelNew" in seed.source
    assert evolve_regions(seed.source)
