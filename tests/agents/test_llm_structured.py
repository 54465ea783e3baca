"""Structured replies (tool calls, JSON fallback) and the one-repair-then-drop rule."""

from __future__ import annotations

from kernelwright.agents.coder import coder_parser
from kernelwright.agents.critic import CritiqueReply
from kernelwright.agents.planner import PlanReply
from kernelwright.prompts import extract_module
from kernelwright.spec.plan import Action
from kernelwright.testing.scripted_llm import malformed, reply, tool_call

PLAN = {
    "space": "custom_kernel",
    "backend": "sycl",
    "strategy": "fuse",
    "steps": ["one", "two"],
    "params": {"BLOCK": 256},
    "rationale": "memory bound",
}
MODULE = "```python\nimport torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n```"


def test_tool_call_is_parsed_and_schema_sent(scripted_llm, make_client):
    scripted_llm.push(tool_call("PlanReply", PLAN))
    plan = make_client().ask_structured("planner", [("user", "plan")], PlanReply)
    assert plan.params == {"BLOCK": 256} and plan.space.value == "custom_kernel"
    body = scripted_llm.requests[0]
    assert body["tools"][0]["function"]["name"] == "PlanReply"
    assert "strategy" in body["tools"][0]["function"]["parameters"]["properties"]
    assert body["tool_choice"]["function"]["name"] == "PlanReply"


def test_json_content_is_accepted_as_fallback(scripted_llm, make_client):
    scripted_llm.push(reply('```json\n{"decision": "stop", "diagnosis": "at roofline"}\n```'))
    critique = make_client().ask_structured("critic", [("user", "judge")], CritiqueReply)
    assert critique.decision == Action.STOP


def test_invalid_tool_call_is_fed_back_once_as_tool_message(scripted_llm, make_client):
    scripted_llm.push(
        tool_call("PlanReply", {"space": "warp_magic"}), tool_call("PlanReply", PLAN)
    )
    client = make_client()
    plan = client.ask_structured("planner", [("user", "plan")], PlanReply)
    assert plan is not None and plan.strategy == "fuse"
    retry = scripted_llm.requests[1]["messages"]
    assert retry[-2]["role"] == "assistant" and retry[-2]["tool_calls"]
    assert retry[-1]["role"] == "tool" and "could not be used" in retry[-1]["content"]
    assert retry[-1]["tool_call_id"] == retry[-2]["tool_calls"][0]["id"]
    usage = client.ledger.per_agent["planner"]
    assert (usage.calls, usage.malformed, usage.dropped) == (2, 1, 0)


def test_broken_tool_arguments_are_repaired(scripted_llm, make_client):
    broken = '{"space": "custom_kernel", '
    scripted_llm.push(tool_call("PlanReply", broken), tool_call("PlanReply", PLAN))
    assert make_client().ask_structured("planner", [("user", "p")], PlanReply) is not None
    assert scripted_llm.requests[1]["messages"][-1]["role"] == "tool"


def test_two_malformed_replies_are_dropped_and_counted(scripted_llm, make_client):
    scripted_llm.push(reply("I think you should fuse."), reply("Still no JSON."))
    client = make_client()
    assert client.ask_structured("planner", [("user", "p")], PlanReply) is None
    assert len(scripted_llm.requests) == 2
    assert scripted_llm.requests[1]["messages"][-1]["role"] == "user"
    usage = client.ledger.per_agent["planner"]
    assert (usage.malformed, usage.dropped) == (2, 1)


def test_text_reply_repaired_once(scripted_llm, make_client):
    scripted_llm.push(reply("Here is my idea, no code."), reply(MODULE))
    client = make_client()
    src = client.ask("coder", [("user", "write")], extract_module, want="code")
    assert "class ModelNew" in src
    feedback = scripted_llm.requests[1]["messages"][-1]["content"]
    assert "no code block" in feedback and "```python" in feedback


def test_text_reply_dropped_after_second_failure(scripted_llm, make_client):
    scripted_llm.push(reply("nope"), reply("```python\nclass ModelNew(:\n```"), reply(MODULE))
    client = make_client()
    assert client.ask("coder", [("user", "write")], extract_module) is None
    assert scripted_llm.remaining == 1  # the third reply was never asked for
    assert client.ledger.per_agent["coder"].dropped == 1


def test_streaming_client_parses_tool_calls_and_counts_usage(scripted_llm, make_client):
    scripted_llm.push(
        tool_call("CritiqueReply", {"decision": "search", "diagnosis": "d"}, usage=(70, 9)),
        reply(MODULE, usage=(50, 30)),
    )
    client = make_client(stream=True)
    critique = client.ask_structured("critic", [("user", "judge")], CritiqueReply)
    assert critique.decision == Action.SEARCH
    assert "class ModelNew" in client.ask("coder", [("user", "write")], extract_module)
    assert all(body["stream"] is True for body in scripted_llm.requests)
    assert client.ledger.per_agent["critic"].input_tokens == 70
    assert client.ledger.per_agent["coder"].output_tokens == 30


def test_malformed_http_body_is_not_a_malformed_reply(scripted_llm, make_client):
    import pytest

    from kernelwright.errors import LLMError

    scripted_llm.push(malformed())
    with pytest.raises(LLMError):
        make_client().ask("coder", [("user", "write")], extract_module)


def test_coder_parser_edit_mode():
    parent = "import torch\n# [EVOLVE_START]\nA = 1\n# [EVOLVE_END]\nclass ModelNew:\n    pass\n"
    parse = coder_parser(parent, edit_mode=True)
    out = parse("<<<<<<< SEARCH\nA = 1\n=======\nA = 2\n>>>>>>> REPLACE\n")
    assert "A = 2" in out and "class ModelNew" in out


def test_coder_parser_edit_mode_takes_a_whole_module_but_not_prose():
    import pytest

    from kernelwright.errors import ReplyFormatError

    parent = "import torch\n# [EVOLVE_START]\nA = 1\n# [EVOLVE_END]\nclass ModelNew:\n    pass\n"
    parse = coder_parser(parent, edit_mode=True)
    whole = "Rewrote it:\n```python\nB = 3\nclass ModelNew:\n    pass\n```\n"
    assert parse(whole) == "B = 3\nclass ModelNew:\n    pass\n"
    with pytest.raises(ReplyFormatError, match="SEARCH/REPLACE"):
        parse("I would change A to 2.")
    with pytest.raises(ReplyFormatError, match="REPLACE"):  # a half edit is not read as a module
        parse("<<<<<<< SEARCH\nA = 1\n=======\nA = 2\n" + whole)
