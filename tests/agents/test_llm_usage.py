"""Usage accounting: per agent and per run, costs from the price table, budgets."""

from __future__ import annotations

from langchain_core.messages import AIMessage

from kernelwright.agents.usage import Usage, UsageLedger, usage_from_reply
from kernelwright.config import LLMSettings
from kernelwright.testing.scripted_llm import reply


def test_usage_from_message_metadata_and_raw_token_usage():
    usage = {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12}
    msg = AIMessage("x", usage_metadata=usage)
    assert usage_from_reply(msg) == (5, 7)
    token_usage = {"prompt_tokens": 3, "completion_tokens": 4}
    raw = AIMessage("x", response_metadata={"token_usage": token_usage})
    assert usage_from_reply(raw) == (3, 4)
    assert usage_from_reply(AIMessage("no usage")) == (0, 0)


def test_per_agent_and_totals_with_costs():
    ledger = UsageLedger()
    ledger.add("coder", {"input_tokens": 1_000_000, "output_tokens": 0}, price=(2.0, 8.0))
    ledger.add("critic", {"input_tokens": 0, "output_tokens": 500_000}, price=(2.0, 8.0))
    assert ledger.per_agent["coder"].cost_usd == 2.0
    assert ledger.per_agent["critic"].cost_usd == 4.0
    total = ledger.totals()
    assert (total.calls, total.total_tokens, total.cost_usd) == (2, 1_500_000, 6.0)


def test_unknown_price_is_not_free():
    ledger = UsageLedger()
    ledger.add("coder", {"input_tokens": 10, "output_tokens": 10}, price=(1.0, 1.0))
    ledger.add("coder", {"input_tokens": 10, "output_tokens": 10}, price=None)
    assert ledger.totals().cost_usd is None
    settings = LLMSettings(model="mystery", max_cost=1.0)
    assert "price of model 'mystery' is unknown" in ledger.over_budget(settings)


def test_budgets():
    ledger = UsageLedger()
    ledger.add("coder", {"input_tokens": 600, "output_tokens": 300}, price=(1000.0, 1000.0))
    assert ledger.over_budget(LLMSettings(model="m")) is None
    assert ledger.over_budget(LLMSettings(model="m", max_tokens=901)) is None
    assert "token budget" in ledger.over_budget(LLMSettings(model="m", max_tokens=900))
    assert "cost budget" in ledger.over_budget(LLMSettings(model="m", max_cost=0.5))
    assert ledger.over_budget(LLMSettings(model="m", max_cost=1.0)) is None


def test_ledger_round_trips_through_json_and_merges():
    ledger = UsageLedger()
    ledger.add("planner", {"input_tokens": 1, "output_tokens": 2}, price=(1.0, 1.0))
    ledger.count_malformed("planner", dropped=True)
    again = UsageLedger.model_validate_json(ledger.model_dump_json())
    assert again == ledger
    merged = again.merge(ledger)
    assert merged.per_agent["planner"] == Usage(
        calls=2, input_tokens=2, output_tokens=4, cost_usd=6e-6, malformed=2, dropped=2
    )
    assert ledger.per_agent["planner"].calls == 1  # merge does not mutate


def test_client_accounts_per_agent_with_server_model_price(scripted_llm, make_client):
    scripted_llm.push(reply("a", usage=(1000, 100)), reply("b", usage=(2000, 0)))
    client = make_client(prices={"scripted": (1.0, 10.0)})
    client.invoke("planner", [("user", "x")])
    client.invoke("coder", [("user", "y")])
    assert client.ledger.per_agent["planner"].cost_usd == 0.002
    assert client.ledger.per_agent["coder"].input_tokens == 2000
    assert client.ledger.totals().calls == 2
