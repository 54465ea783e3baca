"""LLM planner, coder and critic against the scripted server, with offline fallbacks."""

from __future__ import annotations

import pytest

from kernelwright.agents.coder import LLMCoder
from kernelwright.agents.critic import LLMCritic
from kernelwright.agents.metaprompter import MetaPrompter, PromptArchive
from kernelwright.agents.planner import LLMPlanner
from kernelwright.agents.prompting import profile_fitness
from kernelwright.spec import Candidate, ImplementationSpace, Task, derive_contract
from kernelwright.spec.opclass import OperatorClass
from kernelwright.spec.plan import Action, Decision, History, Plan, Profile
from kernelwright.testing.scripted_llm import reply, tool_call

TASK = '''import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0


def get_inputs():
    return [torch.randn(64, 48)]


def get_init_inputs():
    return []
'''

MODULE = '''import torch
from kernelwright.tools.backends import sycl

SRC = r"""
// [EVOLVE_START]
#define BLOCK 64
// [EVOLVE_END]
"""
kern = sycl.load_inline(SRC)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x
'''


@pytest.fixture(scope="module")
def task_and_contract(tmp_path_factory):
    path = tmp_path_factory.mktemp("task") / "relu2.py"
    path.write_text(TASK)
    task = Task.from_path(path)
    return task, derive_contract(task)


class FixedPlanner:
    def plan(self, task, contract, backend):
        return Plan(
            operator_class=OperatorClass.ELEMENTWISE,
            implementation_space=ImplementationSpace.CUSTOM_KERNEL,
            backend=backend,
            strategy="rule strategy",
            rationale="rule rationale",
            flops=1.0,
        )


class ListCoder:
    def __init__(self):
        self.calls = 0

    def propose(self, task, contract, plan, history, n):
        self.calls += 1
        return [Candidate(source="# offline\nclass ModelNew: pass\n", origin="lowered")]


class FixedCritic:
    def __init__(self, action=Action.VARY_PARAMS):
        self.action = action

    def decide(self, plan, history, elapsed_s):
        return Decision(action=self.action, reason="rule", accepted=["a"])


def history(profiles=(), budget=10, last=None) -> History:
    correct = [p for p in profiles if p.correct]
    best = max(correct, key=lambda p: p.speedup) if correct else None
    return History(
        round=len(profiles), budget=budget, spent=len(profiles), profiles=list(profiles),
        round_sizes=[1] * len(profiles), best=best, last_decision=last,
    )


def profile(cid: str, speedup: float | None = 1.5, correct: bool = True) -> Profile:
    return Profile(
        candidate_id=cid, correct=correct, level=5 if correct else 1, speedup=speedup,
        speedup_low=speedup, speedup_high=speedup, flags=[], error=None if correct else "boom",
        stats={"k": {"registers": 33, "spill_stores": 0}},
    )


PLAN_REPLY = {
    "space": "custom_kernel", "backend": "sycl", "strategy": "LLM: one fused vectorised pass",
    "steps": ["vectorise by 4", "tune BLOCK"], "params": {"BLOCK": 128},
    "rationale": "bandwidth bound",
}


def test_planner_merges_llm_strategy_over_rule_analysis(scripted_llm, make_client,
                                                        task_and_contract):
    task, contract = task_and_contract
    scripted_llm.push(tool_call("PlanReply", PLAN_REPLY))
    plan = LLMPlanner(make_client(), FixedPlanner()).plan(task, contract, "sycl")
    assert plan.strategy == "LLM: one fused vectorised pass"
    assert plan.operator_class == OperatorClass.ELEMENTWISE and plan.flops == 1.0
    assert "1. vectorise by 4" in plan.rationale and "BLOCK" in plan.rationale
    prompt = scripted_llm.requests[0]["messages"][-1]["content"]
    assert contract.render().splitlines()[1] in prompt
    assert "torch.relu(x) * 2.0" in prompt and "Fuse the whole chain" in prompt


def test_planner_ignores_disallowed_space_and_falls_back_when_dropped(
    scripted_llm, make_client, task_and_contract
):
    task, contract = task_and_contract
    contract = contract.model_copy(update={"allowed_spaces": [ImplementationSpace.CUSTOM_KERNEL]})
    scripted_llm.push(tool_call("PlanReply", {**PLAN_REPLY, "space": "vendor_library"}))
    client = make_client()
    plan = LLMPlanner(client, FixedPlanner()).plan(task, contract, "sycl")
    assert plan.implementation_space == ImplementationSpace.CUSTOM_KERNEL
    scripted_llm.push(reply("no idea"), reply("still no idea"))
    fallback_plan = LLMPlanner(client, FixedPlanner()).plan(task, contract, "sycl")
    assert fallback_plan.strategy == "rule strategy"


def test_coder_writes_whole_module_then_edits_the_best(scripted_llm, make_client,
                                                       task_and_contract):
    task, contract = task_and_contract
    plan = FixedPlanner().plan(task, contract, "sycl")
    coder = LLMCoder(make_client())
    scripted_llm.push(reply(f"Idea.\n```python\n{MODULE}```"))
    [first] = coder.propose(task, contract, plan, history(), 1)
    assert first.backend == "sycl" and first.origin == "llm" and first.parent is None
    prompt = scripted_llm.requests[0]["messages"][-1]["content"]
    assert "SYCL_EXT_ONEAPI_FUNCTION_PROPERTY" in prompt and "rule strategy" in prompt

    scripted_llm.push(reply("<<<<<<< SEARCH\n#define BLOCK 64\n=======\n#define BLOCK 256\n"
                            ">>>>>>> REPLACE\n"))
    last = Decision(action=Action.VARY_PARAMS, reason="CRITIC-SAYS-TILE")
    [second] = coder.propose(task, contract, plan, history([profile(first.id, 1.7)], last=last), 1)
    assert "#define BLOCK 256" in second.source and second.parent == first.id
    prompt = scripted_llm.requests[1]["messages"][-1]["content"]
    for needle in ("<<<<<<< SEARCH", "#define BLOCK 64", "speedup 1.7x", "registers=33",
                   "CRITIC-SAYS-TILE"):
        assert needle in prompt, needle


def test_coder_writes_from_scratch_when_the_plan_has_no_source(scripted_llm, make_client,
                                                              task_and_contract):
    """A reference that does not lower: no lowered seed, the LLM writes the whole module."""
    from kernelwright.agents.coder import LoweredCoder

    task, contract = task_and_contract
    plan = FixedPlanner().plan(task, contract, "sycl")  # sources == []
    scripted_llm.push(reply(f"```python\n{MODULE}```"))
    out = LLMCoder(make_client(), fallback=LoweredCoder()).propose(
        task, contract, plan, history(), 1
    )
    assert [c.origin for c in out] == ["llm"] and out[0].parent is None
    assert len(scripted_llm.requests) == 1


def test_coder_falls_back_when_replies_are_dropped(scripted_llm, make_client, task_and_contract):
    task, contract = task_and_contract
    fallback = ListCoder()
    scripted_llm.push(reply("no code"), reply("no code either"))
    plan = FixedPlanner().plan(task, contract, "sycl")
    out = LLMCoder(make_client(), fallback=fallback).propose(task, contract, plan, history(), 1)
    assert fallback.calls == 1 and out[0].origin == "lowered"


def test_coder_stops_cleanly_at_the_budget(scripted_llm, make_client, task_and_contract):
    task, contract = task_and_contract
    scripted_llm.push(reply(f"```python\n{MODULE}```", usage=(5000, 1000)), reply("unused"))
    fallback = ListCoder()
    coder = LLMCoder(make_client(max_tokens=5000), fallback=fallback)
    plan = FixedPlanner().plan(task, contract, "sycl")
    out = coder.propose(task, contract, plan, history(), 3)
    assert len(out) == 1 and len(scripted_llm.requests) == 1
    assert coder.propose(task, contract, plan, history(), 2) == []
    assert fallback.calls == 0


def test_critic_uses_llm_but_rules_stop_first(scripted_llm, make_client):
    plan = FixedPlanner().plan(None, None, "sycl")
    client = make_client()
    scripted_llm.push(tool_call("CritiqueReply", {
        "decision": "switch_strategy", "diagnosis": "spills\n everywhere",
        "next_steps": ["smaller tile"], "confidence": 0.8,
    }))
    h = history([profile("c1", 1.1)])
    decision = LLMCritic(client, FixedCritic()).decide(plan, h, 1.0)
    assert decision.action == Action.SWITCH_STRATEGY and decision.accepted == ["a"]
    assert decision.reason == "spills everywhere Next: smaller tile"
    prompt = scripted_llm.requests[0]["messages"][-1]["content"]
    assert "speedup 1.1x" in prompt and "Budget left: 9" in prompt

    stop = LLMCritic(client, FixedCritic(Action.STOP)).decide(plan, h, 1.0)
    assert stop.action == Action.STOP and len(scripted_llm.requests) == 1


def test_critic_stops_when_llm_budget_spent(scripted_llm, make_client):
    # the prompt's estimated cost (chars / 4 tokens) counts before the call: far below 0.03
    client = make_client(max_cost=0.03, prices={"scripted": (10.0, 10.0)})
    scripted_llm.push(tool_call("CritiqueReply", {"decision": "search", "diagnosis": "d"},
                                usage=(2000, 1000)))
    plan = FixedPlanner().plan(None, None, "sycl")
    critic = LLMCritic(client, FixedCritic())
    assert critic.decide(plan, history([profile("c")]), 0.0).action == Action.SEARCH
    decision = critic.decide(plan, history([profile("c")]), 0.0)
    assert decision.action == Action.STOP and "cost budget" in decision.reason
    assert len(scripted_llm.requests) == 1


def test_coder_evolves_meta_prompts_from_scores(scripted_llm, make_client, task_and_contract):
    task, contract = task_and_contract
    plan = FixedPlanner().plan(task, contract, "sycl")
    client = make_client()
    archive = PromptArchive(seed=3, explore=0.0)
    coder = LLMCoder(client, metaprompter=MetaPrompter(client, archive, every=2))
    other = MODULE.replace("return x", "return x + 0")
    scripted_llm.push(reply(f"```python\n{MODULE}```"), reply(f"```python\n{other}```"))
    first, second = coder.propose(task, contract, plan, history(), 2)
    seed_id = first.prompt_id
    assert seed_id == second.prompt_id and "Optimisation Philosophy" in (
        scripted_llm.requests[0]["messages"][-1]["content"]
    )
    scripted_llm.push(
        reply("<<<<<<< SEARCH\n- Assuming the nominal shape: every shape variant of the contract "
              "must work.\n=======\n- Assuming the nominal shape.\n- NEW LESSON.\n"
              ">>>>>>> REPLACE\n"),
        reply("<<<<<<< SEARCH\n#define BLOCK 64\n=======\n#define BLOCK 32\n>>>>>>> REPLACE"),
    )
    profiles = [profile(first.id, 1.2), profile(second.id, None, correct=False)]
    [third] = coder.propose(task, contract, plan, history(profiles), 1)
    assert "BLOCK 32" in third.source and third.parent == first.id
    assert len(archive) == 2
    child = next(p for p in archive.prompts.values() if p.id != seed_id)
    assert child.parents == [seed_id] and "NEW LESSON" in child.sections["common_pitfalls"]
    assert archive.stats[seed_id].fitness == profile_fitness(profiles[0]) == 6.2
    meta_prompt = scripted_llm.requests[2]["messages"][-1]["content"]
    assert "not correct (level 1 of 5)" in meta_prompt


def test_make_llm_policies_wires_protocols_ledger_and_archive(scripted_llm, tmp_path,
                                                              task_and_contract, monkeypatch):
    from kernelwright.agents import Coder, Critic, Planner
    from kernelwright.agents.llm_team import make_llm_policies
    from kernelwright.agents.usage import UsageLedger
    from kernelwright.config import LLMSettings

    task, contract = task_and_contract
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings = LLMSettings(model=scripted_llm.model, base_url=scripted_llm.base_url)
    ledger = UsageLedger()
    ledger.add("coder", {"input_tokens": 10, "output_tokens": 5})  # restored from a resume

    def missing(cid):
        raise FileNotFoundError(cid)

    archive_path = tmp_path / "prompts.json"
    policies = make_llm_policies(
        settings, FixedPlanner(), ListCoder(), FixedCritic(), sources=missing, ledger=ledger,
        prompt_archive=archive_path,
    )
    assert isinstance(policies.planner, Planner) and isinstance(policies.coder, Coder)
    assert isinstance(policies.critic, Critic)
    scripted_llm.push(reply(f"```python\n{MODULE}```"))
    plan = FixedPlanner().plan(task, contract, "sycl")
    [cand] = policies.coder.propose(task, contract, plan, history([profile("gone", 2.0)]), 1)
    assert cand.parent is None  # the best's source was not found: whole-module mode
    assert policies.client.ledger.totals().calls == 2
    policies.coder.propose(task, contract, plan, history([profile(cand.id, 2.0)]), 0)
    assert archive_path.is_file()
    again = make_llm_policies(
        settings, FixedPlanner(), None, FixedCritic(), prompt_archive=archive_path
    )
    assert again.metaprompter.archive.stats[cand.prompt_id].fitness == 7.0
