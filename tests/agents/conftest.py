"""Fixtures for the LLM side: a scripted OpenAI-compatible server and clients pointed at it."""

from __future__ import annotations

import pytest

from kernelwright.agents.llm import LLMClient, make_chat_model
from kernelwright.config import LLMSettings
from kernelwright.testing.scripted_llm import ScriptedLLM


@pytest.fixture
def scripted_llm():
    with ScriptedLLM() as llm:
        yield llm


@pytest.fixture
def make_client(scripted_llm, monkeypatch):
    """``make_client(**settings)`` -> an ``LLMClient`` talking to ``scripted_llm``."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    def make(**overrides) -> LLMClient:
        fields = {"model": scripted_llm.model, "base_url": scripted_llm.base_url, "max_retries": 2}
        settings = LLMSettings(**{**fields, **overrides})
        return LLMClient(make_chat_model(settings), settings)

    return make
