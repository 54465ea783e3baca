"""Token and cost accounting per agent and per run, from the usage the LLM server reports.

No tokenizer is involved: counts come from the server's ``usage`` block (LangChain exposes it
as ``AIMessage.usage_metadata``). A call whose server reports no usage is still counted as a call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from kernelwright.config import LLMSettings


class Usage(BaseModel):
    """What one agent (or the whole run) has spent.

    ``cost_usd`` is ``None`` while any call was made with a model missing from the price table,
    so an unknown price is never reported as free.
    """

    model_config = ConfigDict(frozen=True)
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    malformed: int = 0  # replies that could not be parsed (each one is fed back once)
    dropped: int = 0  # requests given up after the repair round also failed

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        cost = None if None in (self.cost_usd, other.cost_usd) else self.cost_usd + other.cost_usd
        return Usage(
            calls=self.calls + other.calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=cost,
            malformed=self.malformed + other.malformed,
            dropped=self.dropped + other.dropped,
        )


def usage_from_reply(reply: Any) -> tuple[int, int]:
    """``(input_tokens, output_tokens)`` of an ``AIMessage``, a usage dict, or ``(0, 0)``.

    Reads ``usage_metadata`` first, then the raw ``token_usage`` in ``response_metadata``.
    """
    meta = getattr(reply, "usage_metadata", None)
    if meta is None and isinstance(reply, Mapping):
        meta = reply
    if meta:
        return int(meta.get("input_tokens", 0) or 0), int(meta.get("output_tokens", 0) or 0)
    raw = (getattr(reply, "response_metadata", None) or {}).get("token_usage") or {}
    return int(raw.get("prompt_tokens", 0) or 0), int(raw.get("completion_tokens", 0) or 0)


def model_from_reply(reply: Any) -> str | None:
    """The model name the server says answered, if it says."""
    meta = getattr(reply, "response_metadata", None) or {}
    return meta.get("model_name") or meta.get("model")


class UsageLedger(BaseModel):
    """Usage of one run, per agent; small and JSON-serialisable so it can live in graph state.

    Example:
        >>> ledger = UsageLedger()
        >>> _ = ledger.add("coder", {"input_tokens": 1200, "output_tokens": 300}, price=(1.0, 4.0))
        >>> ledger.totals().total_tokens, round(ledger.totals().cost_usd, 6)
        (1500, 0.0024)
    """

    per_agent: dict[str, Usage] = Field(default_factory=dict)

    def add(
        self,
        agent: str,
        usage: Any,
        *,
        price: tuple[float, float] | None = None,
        malformed: bool = False,
    ) -> Usage:
        """Record one call of ``agent``; ``price`` is ($/1M input, $/1M output), None if unknown.

        Returns the usage of this single call.
        """
        tokens_in, tokens_out = usage_from_reply(usage)
        cost = None if price is None else (tokens_in * price[0] + tokens_out * price[1]) / 1e6
        call = Usage(calls=1, input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost)
        self.per_agent[agent] = self.per_agent.get(agent, Usage()) + call
        if malformed:
            self.count_malformed(agent)
        return call

    def count_malformed(self, agent: str, *, dropped: bool = False) -> None:
        """Count one unparseable reply of ``agent`` (and, if ``dropped``, the request given up)."""
        extra = Usage(malformed=1, dropped=int(dropped))
        self.per_agent[agent] = self.per_agent.get(agent, Usage()) + extra

    def totals(self) -> Usage:
        """The sum over every agent."""
        total = Usage()
        for usage in self.per_agent.values():
            total = total + usage
        return total

    def over_budget(self, settings: LLMSettings, upcoming_tokens: int = 0) -> str | None:
        """Why the run must stop for budget reasons, or ``None`` while it may go on.

        ``upcoming_tokens`` (the next prompt's estimated size) counts in advance, so a limit
        stops the request that would cross it instead of the one after.
        """
        spent = self.totals()
        price = settings.price_for(None)
        extra = None if price is None or spent.cost_usd is None else (
            upcoming_tokens * price[0] / 1e6
        )
        total = spent.model_copy(update={
            "input_tokens": spent.input_tokens + upcoming_tokens,
            "cost_usd": spent.cost_usd if extra is None else spent.cost_usd + extra,
        })
        if settings.max_requests is not None and total.calls >= settings.max_requests:
            return (
                f"LLM request cap reached: {total.calls} requests, limit "
                f"{settings.max_requests} (raise --max-llm-requests to continue)"
            )
        if settings.max_tokens is not None and total.total_tokens >= settings.max_tokens:
            return (
                f"LLM token budget spent: {total.total_tokens} tokens used, limit "
                f"{settings.max_tokens} (raise --max-tokens to continue)"
            )
        if settings.max_cost is not None:
            if total.cost_usd is None:
                return (
                    f"LLM cost budget {settings.max_cost} USD is set but the price of model "
                    f"{settings.model!r} is unknown: add it to the price table (llm prices)"
                )
            if total.cost_usd >= settings.max_cost:
                return (
                    f"LLM cost budget spent: {total.cost_usd:.4f} USD used, limit "
                    f"{settings.max_cost} USD (raise --max-cost to continue)"
                )
        return None

    def merge(self, other: UsageLedger) -> UsageLedger:
        """A new ledger holding both (for reducers that combine parallel branches)."""
        out = UsageLedger(per_agent=dict(self.per_agent))
        for agent, usage in other.per_agent.items():
            out.per_agent[agent] = out.per_agent.get(agent, Usage()) + usage
        return out
