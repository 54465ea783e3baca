"""The real ChatOpenAI client path against the scripted server: replies, retries, errors."""

from __future__ import annotations

import socket

import pytest

from kernelwright.agents.llm import (
    LLMClient,
    make_chat_model,
    probe,
)
from kernelwright.config import LLMSettings
from kernelwright.errors import LLMBudgetError, LLMError
from kernelwright.testing.scripted_llm import error, malformed, reply


@pytest.mark.slow
def test_plain_reply_goes_through_chat_completions(scripted_llm, make_client):
    scripted_llm.push(reply("hello there", usage=(11, 3)))
    client = make_client(temperature=0.3, reply_max_tokens=77)
    message = client.invoke("coder", [("system", "be brief"), ("user", "hi")])
    assert message.content == "hello there"
    body = scripted_llm.requests[0]
    assert body["model"] == scripted_llm.model
    assert body["messages"][0] == {"role": "system", "content": "be brief"}
    assert body["temperature"] == 0.3
    assert body.get("max_tokens", body.get("max_completion_tokens")) == 77
    assert client.ledger.per_agent["coder"].input_tokens == 11


def test_streaming_assembles_text_and_reports_usage(scripted_llm, make_client):
    text = "a streamed reply that spans several server-sent events"
    scripted_llm.push(reply(text, usage=(40, 12)))
    chunks = list(make_client().chat.stream([("user", "hi")]))
    assert len(chunks) > 3
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged = merged + chunk
    assert merged.content == text
    assert merged.usage_metadata["input_tokens"] == 40
    assert merged.usage_metadata["output_tokens"] == 12
    assert scripted_llm.requests[0]["stream"] is True
    assert scripted_llm.requests[0]["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("status", [429, 500, 503])
def test_transient_errors_are_retried(scripted_llm, make_client, status):
    scripted_llm.push(error(status), reply("finally"))
    client = make_client(max_retries=2)
    assert client.invoke("coder", [("user", "hi")]).content == "finally"
    assert len(scripted_llm.requests) == 2
    assert client.ledger.totals().calls == 1


def test_retries_exhausted_raise_llm_error(scripted_llm, make_client):
    scripted_llm.push(error(429), error(429), error(429))
    with pytest.raises(LLMError, match="rate limiting after 2 retries"):
        make_client(max_retries=2).invoke("coder", [("user", "hi")])
    assert len(scripted_llm.requests) == 3


def test_server_error_names_url(scripted_llm, make_client):
    scripted_llm.push(error(500), error(500))
    with pytest.raises(LLMError, match=r"HTTP 500") as info:
        make_client(max_retries=1).invoke("coder", [("user", "hi")])
    assert scripted_llm.base_url in str(info.value)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_endpoint_down_is_a_clear_llm_error():
    url = f"http://127.0.0.1:{_free_port()}/v1"
    settings = LLMSettings(model="m", base_url=url, max_retries=0, timeout_s=5)
    client = LLMClient(make_chat_model(settings), settings)
    with pytest.raises(LLMError) as info:
        client.invoke("planner", [("user", "hi")])
    message = str(info.value)
    assert url in message and "--llm-base-url" in message
    assert isinstance(info.value, RuntimeError)
    assert client.ledger.totals().calls == 0


def test_timeout_is_a_clear_llm_error(scripted_llm, make_client):
    scripted_llm.push(reply("late", delay_s=1.5))
    with pytest.raises(LLMError, match="did not answer within"):
        make_client(max_retries=0, timeout_s=0.3).invoke("coder", [("user", "hi")])


def test_malformed_body_is_an_llm_error(scripted_llm, make_client):
    scripted_llm.push(malformed())
    with pytest.raises(LLMError, match="unusable answer"):
        make_client().invoke("coder", [("user", "hi")])


@pytest.mark.parametrize(
    ("status", "pattern"), [(401, "rejected the API key"), (404, "has no model")]
)
def test_configuration_errors_name_the_fix(scripted_llm, make_client, status, pattern):
    scripted_llm.push(error(status))
    with pytest.raises(LLMError, match=pattern):
        make_client().invoke("coder", [("user", "hi")])
    assert len(scripted_llm.requests) == 1  # not retried


def test_api_key_comes_from_the_named_env_var(scripted_llm, make_client, monkeypatch):
    monkeypatch.setenv("MY_LLM_KEY", "s3cret")
    scripted_llm.push(reply("ok"))
    client = make_client(api_key_env="MY_LLM_KEY")
    client.invoke("coder", [("user", "hi")])
    assert scripted_llm.headers[0]["authorization"] == "Bearer s3cret"
    assert "s3cret" not in repr(client) and "s3cret" not in client.settings.model_dump_json()


def test_missing_key_for_remote_endpoint_names_the_variable(monkeypatch):
    monkeypatch.delenv("NOPE_KEY", raising=False)
    settings = LLMSettings(
        model="m", base_url="https://llm.example.com/v1", api_key_env="NOPE_KEY"
    )
    with pytest.raises(LLMError, match="NOPE_KEY"):
        make_chat_model(settings)


def test_no_model_configured_is_an_error():
    with pytest.raises(LLMError, match="--llm-model"):
        make_chat_model(LLMSettings())


def test_settings_from_env(monkeypatch):
    monkeypatch.setenv("KERNELWRIGHT_LLM_MODEL", "qwen")
    monkeypatch.setenv("KERNELWRIGHT_LLM_MAX_COST", "2.5")
    monkeypatch.setenv("KERNELWRIGHT_LLM_PRICES", '{"qwen": [0.5, 1.5]}')
    settings = LLMSettings()
    assert settings.model == "qwen" and settings.max_cost == 2.5
    assert settings.price_for("qwen-2.5-coder") == (0.5, 1.5)
    assert settings.price_for("other") is None


def test_budget_blocks_further_calls(scripted_llm, make_client):
    scripted_llm.push(reply("one", usage=(900, 200)), reply("two"))
    client = make_client(max_tokens=1000)
    client.invoke("coder", [("user", "hi")])
    assert "token budget" in client.over_budget()
    with pytest.raises(LLMBudgetError, match="--max-tokens"):
        client.invoke("coder", [("user", "again")])
    assert len(scripted_llm.requests) == 1


def test_probe(scripted_llm):
    assert probe(LLMSettings(model="m", base_url=scripted_llm.base_url)) is None
    down = LLMSettings(model="m", base_url=f"http://127.0.0.1:{_free_port()}/v1")
    assert "cannot reach" in probe(down, timeout_s=1)
