"""Failures reach the next prompt: attempts, repair hints, repeat notes, checked decisions."""

from __future__ import annotations

import pytest

from kernelwright.agents.attempts import attempt_window, key_error_line, short_diff
from kernelwright.agents.coder import LLMCoder
from kernelwright.agents.critic import LLMCritic
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

PRELUDE = "// PRELUDE-HELPER " + "x" * 400 + "\n"
MODULE = '''import torch
from kernelwright.tools.backends import cpp

SRC = r"""
{prelude}// [EVOLVE_START]
#define BLOCK {block}
// [EVOLVE_END]
"""


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x
'''

BUILD_LOG = (
    'Traceback (most recent call last):\n'
    '  File "/work/main/kernelwright/tools/backends/cpp.py", line 88, in load_inline\n'
    '/tmp/kw/src.cpp:7:20: error: \'kw_lane_id\' was not declared in this scope\n'
    '/tmp/kw/src.cpp:7:20: error: \'kw_lane_id\' was not declared in this scope\n'
)


def module(block: str) -> str:
    return MODULE.format(prelude=PRELUDE, block=block)


@pytest.fixture(scope="module")
def task_and_contract(tmp_path_factory):
    path = tmp_path_factory.mktemp("task") / "relu2.py"
    path.write_text(TASK)
    task = Task.from_path(path)
    return task, derive_contract(task)


def plan_for(backend: str = "cpp") -> Plan:
    return Plan(
        operator_class=OperatorClass.ELEMENTWISE,
        implementation_space=ImplementationSpace.CUSTOM_KERNEL,
        backend=backend, strategy="S", rationale="R", flops=1.0,
    )


def profile(cid: str, correct: bool, speedup: float | None = None, error: str | None = None,
            level: int = 5) -> Profile:
    return Profile(candidate_id=cid, correct=correct, level=level if not correct else 5,
                   speedup=speedup, speedup_low=speedup, speedup_high=speedup, error=error,
                   origin="llm")


def history(profiles: list[Profile], sizes: list[int] | None = None, budget: int = 10):
    correct = [p for p in profiles if p.correct]
    best = max(correct, key=lambda p: p.speedup or 0) if correct else None
    return History(round=len(profiles), budget=budget, spent=len(profiles), profiles=profiles,
                   round_sizes=sizes or [1] * len(profiles), best=best)


@pytest.fixture
def store():
    """Candidates by id: a correct parent and a child that does not build."""
    parent = Candidate(source=module("64"), backend="cpp", origin="lowered")
    broken = Candidate(source=module("64 + kw_lane_id"), backend="cpp", origin="llm",
                       parent=parent.id)
    return {c.id: c for c in (parent, broken)}, parent, broken


def edit(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n"


def test_key_line_has_no_kernelwright_frames_and_no_path():
    assert key_error_line(BUILD_LOG) == "'kw_lane_id' was not declared in this scope"
    mismatch = "variant nominal, seed 0: output 0 differs from the reference: max abs error 3.6"
    assert key_error_line("Traceback\n" + mismatch) == mismatch
    assert key_error_line(None) is None


def test_window_puts_latest_failures_first_and_dedups_errors(store):
    sources, parent, broken = store
    profiles = [profile(parent.id, True, 1.2), profile(broken.id, False, error=BUILD_LOG, level=1),
                profile("dup", False, error=BUILD_LOG, level=1)]
    window = attempt_window(history(profiles), sources.get, size=4)
    assert [a.candidate_id for a in window] == ["dup", parent.id]  # one per distinct error
    full = attempt_window(history(profiles[:2]), sources.get, size=4)
    assert full[0].diff == "-#define BLOCK 64\n+#define BLOCK 64 + kw_lane_id"
    assert full[1].speed == "1.2x (spread 1.2-1.2)"


def test_compile_error_and_failing_code_reach_the_next_coder_prompt(
    scripted_llm, make_client, task_and_contract, store
):
    task, contract = task_and_contract
    sources, parent, broken = store
    h = history([profile(parent.id, True, 1.2), profile(broken.id, False, error=BUILD_LOG,
                                                        level=1)])
    scripted_llm.push(reply(edit("#define BLOCK 64", "#define BLOCK 128")))
    [cand] = LLMCoder(make_client(), sources=sources.get).propose(task, contract, plan_for(), h, 1)
    assert cand.parent == parent.id and "#define BLOCK 128" in cand.source
    prompt = scripted_llm.requests[0]["messages"][-1]["content"]
    assert prompt.count("'kw_lane_id' was not declared in this scope") == 1  # no duplicate log
    assert "+#define BLOCK 64 + kw_lane_id" in prompt  # the failing code, as a diff
    assert "kernelwright/tools" not in prompt and "/tmp/kw/src.cpp" not in prompt
    assert "PRELUDE-HELPER" not in prompt  # only the editable block is shown
    assert "host CPU" in prompt or "Machine" not in prompt


def test_cut_off_reply_is_named_as_cut_off(scripted_llm, make_client, task_and_contract, store):
    task, contract = task_and_contract
    sources, parent, _ = store
    h = history([profile(parent.id, True, 1.2)])
    scripted_llm.push(reply("<<<<<<< SEARCH\n#define BL", finish_reason="length"),
                      reply(edit("#define BLOCK 64", "#define BLOCK 32")))
    [cand] = LLMCoder(make_client(), sources=sources.get).propose(task, contract, plan_for(), h, 1)
    repair = scripted_llm.requests[1]["messages"][-1]["content"]
    assert "cut off at the token limit" in repair and "#define BLOCK 32" in cand.source


def test_module_with_syntax_error_is_named_as_such(scripted_llm, make_client, task_and_contract,
                                                   store):
    task, contract = task_and_contract
    sources, parent, _ = store
    h = history([profile(parent.id, True, 1.2)])
    scripted_llm.push(reply("```python\nclass ModelNew(:\n    pass\n```"),
                      reply("```python\nclass ModelNew(:\n```"))
    LLMCoder(make_client(), sources=sources.get).propose(task, contract, plan_for(), h, 1)
    repair = scripted_llm.requests[1]["messages"][-1]["content"]
    assert "syntax error" in repair and "contains no SEARCH/REPLACE" not in repair


def test_repeat_note_carries_the_reason(scripted_llm, make_client, task_and_contract, store):
    task, contract = task_and_contract
    sources, parent, broken = store
    h = history([profile(parent.id, True, 1.2), profile(broken.id, False, error=BUILD_LOG,
                                                        level=1)])
    scripted_llm.push(reply(edit("#define BLOCK 64", "#define BLOCK 64 + kw_lane_id")),
                      reply(edit("#define BLOCK 64", "#define BLOCK 16")))
    [cand] = LLMCoder(make_client(), sources=sources.get).propose(task, contract, plan_for(), h, 1)
    note = scripted_llm.requests[1]["messages"][-1]["content"]
    assert broken.id in note and "kw_lane_id' was not declared" in note
    assert "does not build" in note and "#define BLOCK 16" in cand.source


def test_two_requests_of_a_round_differ(scripted_llm, make_client, task_and_contract, store):
    task, contract = task_and_contract
    sources, parent, _ = store
    h = history([profile(parent.id, True, 1.2)])
    scripted_llm.push(reply(edit("#define BLOCK 64", "#define BLOCK 128")),
                      reply(edit("#define BLOCK 64", "#define BLOCK 256")))
    out = LLMCoder(make_client(), sources=sources.get).propose(task, contract, plan_for(), h, 2)
    assert len(out) == 2
    first, second = (r["messages"][-1]["content"] for r in scripted_llm.requests)
    assert first != second and "+#define BLOCK 128" in second


def test_first_round_edits_the_lowered_seed(scripted_llm, make_client, task_and_contract):
    task, contract = task_and_contract
    seed = Candidate(source=module("64"), backend="cpp", origin="lowered")

    class Seeder:
        def seed_candidate(self, task, contract, plan):
            return seed

        def propose(self, *a):
            return []

    scripted_llm.push(reply(edit("#define BLOCK 64", "#define BLOCK 8")))
    out = LLMCoder(make_client(), fallback=Seeder()).propose(
        task, contract, plan_for(), history([]), 2
    )
    assert [c.origin for c in out] == ["lowered", "llm"] and out[1].parent == seed.id
    assert "<<<<<<< SEARCH" in scripted_llm.requests[0]["messages"][-1]["content"]


class RuleSays:
    def __init__(self, action: Action):
        self.action = action

    def decide(self, plan, history, elapsed_s):
        return Decision(action=self.action, reason="rule")


def test_llm_stop_refused_early_and_critic_sees_every_candidate(scripted_llm, make_client, store):
    sources, parent, broken = store
    h = history([profile(parent.id, True, 1.2), profile(broken.id, False, error=BUILD_LOG,
                                                        level=1)], sizes=[2])
    scripted_llm.push(tool_call("CritiqueReply", {"decision": "stop", "diagnosis": "done"}))
    critic = LLMCritic(make_client(), RuleSays(Action.VARY_PARAMS), sources=sources.get,
                       context=lambda: ("CONTRACT-TEXT", "REFERENCE-TEXT"))
    decision = critic.decide(plan_for(), h, 1.0)
    assert decision.action == Action.VARY_PARAMS and "refused" in decision.reason
    prompt = scripted_llm.requests[0]["messages"][-1]["content"]
    assert parent.id in prompt and broken.id in prompt and "kw_lane_id" in prompt
    assert "CONTRACT-TEXT" in prompt and "REFERENCE-TEXT" in prompt


def test_llm_search_refused_when_the_tuner_has_nothing(scripted_llm, make_client, store):
    sources, parent, _ = store
    h = history([profile(parent.id, True, 1.2)])
    scripted_llm.push(tool_call("CritiqueReply", {"decision": "search", "diagnosis": "tune"}))
    critic = LLMCritic(make_client(), RuleSays(Action.VARY_PARAMS), can_search=lambda h: False)
    decision = critic.decide(plan_for(), h, 1.0)
    assert decision.action == Action.VARY_PARAMS and "no point left" in decision.reason


def test_short_diff_is_bounded():
    old = "\n".join(f"line {i}" for i in range(40))
    new = "\n".join(f"LINE {i}" for i in range(40))
    diff = short_diff(old, new, limit=6)
    assert diff.count("\n") == 6 and "more changed lines" in diff


def test_identical_sources_are_one_candidate():
    text = module("64")
    seed = Candidate(source=text, backend="cpp", origin="lowered", params={"g0.threads": "auto"})
    copy = Candidate(source=text, backend="cpp", origin="llm", parent=seed.id)
    assert copy.id == seed.id  # the LLM's copy of the seed is not evaluated twice
    assert Candidate(source=module("128"), backend="cpp").id != seed.id
    assert Candidate(source=text, backend="sycl").id != seed.id


VARIANTS = '''SRC = r"""
// [EVOLVE_START]
extern "C" void k0_0(float* x) {
  for (int i = 0; i < 256; ++i) x[i] = 2.0f * x[i];
}

extern "C" void k1_0(float* x) {
  for (int i = 0; i < 63; ++i) x[i] = 2.0f * x[i];
}
// [EVOLVE_END]
"""
'''


def test_only_the_nominal_kernel_is_shown_and_edits_reach_every_variant():
    from kernelwright.agents.attempts import shown_block
    from kernelwright.agents.coder import apply_to_view
    from kernelwright.errors import ReplyFormatError
    from kernelwright.prompts import Edit

    shown = shown_block(VARIANTS)
    assert "k0_0" in shown and "k1_0" not in shown and "i < KW_S0" in shown
    assert "KW_S0 = 256, 63" in shown
    both = apply_to_view(VARIANTS, [Edit(search="2.0f * x[i]", replace="x[i] + x[i]")])
    assert both.count("x[i] + x[i]") == 2  # every variant is written from the nominal kernel
    assert "i < 63;" in both and "i < 256;" in both
    with pytest.raises(ReplyFormatError, match="was not found"):
        apply_to_view(VARIANTS, [Edit(search="nowhere", replace="x")])


def test_inspirations_come_one_per_map_elites_cell_of_their_source():
    def cand(body: str) -> Candidate:
        return Candidate(source=f'SRC = r"""\n// [EVOLVE_START]\n{body}\n// [EVOLVE_END]\n"""\n',
                         backend="cpp", origin="llm")

    parent = cand("for (int i = 0; i < n; ++i) y[i] = x[i];")
    team = cand("#pragma omp parallel for\nfor (int i = 0; i < n; ++i) y[i] = x[i];")
    team2 = cand("#pragma omp parallel for\nfor (int i = 0; i < n; ++i) y[i] = x[i] + 0;")
    simd = cand("#pragma omp simd\nfor (int i = 0; i < n; ++i) y[i] = x[i];")
    known = {c.id: c for c in (parent, team, team2, simd)}
    coder = LLMCoder(client=None, sources=known.get, inspirations=3)
    h = history([profile(parent.id, True, 1.0), profile(team.id, True, 3.0),
                 profile(team2.id, True, 2.0), profile(simd.id, True, 1.5)])
    shown = coder._inspirations(h, parent)
    assert len(shown) == 2  # the two OpenMP-team kernels share a cell: only the faster shows
    assert "omp parallel for" in shown[0].source and "3x" in shown[0].summary
    assert "omp simd" in shown[1].source
