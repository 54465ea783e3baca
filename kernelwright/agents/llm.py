"""The LLM connection: the chat-model factory, and a client that accounts and repairs.

Any OpenAI-compatible server works (OpenAI, vLLM, Ollama, llama.cpp server). The API key is
never stored: ``Settings.llm`` (:class:`kernelwright.config.LLMSettings`) holds only the
*name* of the environment variable that holds it.
Retries with exponential backoff on 429, 408, 5xx, connection errors and timeouts are the
OpenAI client's own (``max_retries``; it honours ``retry-after`` headers).
"""

from __future__ import annotations

import json
import logging
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from kernelwright.agents.journal import CallJournal, message_dicts, request_key
from kernelwright.agents.usage import Usage, UsageLedger, model_from_reply
from kernelwright.config import LLMSettings
from kernelwright.errors import LLMBudgetError, LLMError, ReplyFormatError
from kernelwright.prompts import extract_json, render

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_openai import ChatOpenAI

log = logging.getLogger(__name__)
T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


def make_chat_model(settings: LLMSettings) -> ChatOpenAI:
    """A ``ChatOpenAI`` for ``settings`` (Chat Completions API, usage reported when streaming)."""
    from langchain_openai import ChatOpenAI

    if not settings.enabled:
        raise LLMError("no LLM model configured: pass --llm-model NAME (and --llm-base-url URL)")
    # Only set ``streaming`` when on: an explicit False makes ``.stream()`` fall back to invoke.
    streaming = {"streaming": True} if settings.stream else {}
    return ChatOpenAI(
        model=settings.model,
        base_url=settings.base_url,
        api_key=settings.api_key(),
        temperature=settings.temperature,
        timeout=settings.timeout_s,
        max_retries=settings.max_retries,
        max_tokens=settings.reply_max_tokens,
        use_responses_api=False,
        **streaming,
        stream_usage=True,
    )


def probe(settings: LLMSettings, timeout_s: float = 3.0) -> str | None:
    """``None`` if ``GET {base_url}/models`` answers, else why not (for ``doctor``)."""
    url = settings.base_url.rstrip("/") + "/models"
    auth = {"Authorization": f"Bearer {_key_or_none(settings)}"}
    request = urllib.request.Request(url, headers=auth)
    try:
        with urllib.request.urlopen(request, timeout=timeout_s):  # noqa: S310 - user's own URL
            return None
    except urllib.error.HTTPError as exc:
        usable = exc.code < 500 and exc.code not in (401, 403)
        return None if usable else f"HTTP {exc.code} from {url}"
    except (OSError, ValueError) as exc:
        return f"cannot reach {url}: {exc}"


def _key_or_none(settings: LLMSettings) -> str:
    return os.environ.get(settings.api_key_env, "")


def translate_error(exc: Exception, settings: LLMSettings) -> LLMError:
    """An ``LLMError`` naming the endpoint, the problem and the fix for an OpenAI client error."""
    import openai

    url, model = settings.base_url, settings.model
    tries = f"after {settings.max_retries} retries"
    if isinstance(exc, openai.APITimeoutError):
        return LLMError(
            f"the LLM at {url} did not answer within {settings.timeout_s:g} s ({tries}); "
            "raise --llm-timeout or check the server's load"
        )
    if isinstance(exc, openai.APIConnectionError):
        return LLMError(
            f"cannot reach the LLM endpoint {url} ({tries}): {str(exc).rstrip('.')}. Check that "
            "the server is running and that --llm-base-url is right (it usually ends in /v1)"
        )
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return LLMError(
            f"the LLM at {url} rejected the API key from ${settings.api_key_env}: set a valid key"
        )
    if isinstance(exc, openai.NotFoundError):
        return LLMError(
            f"the LLM at {url} has no model {model!r} (or the URL is wrong): check --llm-model "
            "and --llm-base-url"
        )
    if isinstance(exc, openai.RateLimitError):
        return LLMError(f"the LLM at {url} is still rate limiting {tries}; wait or lower load")
    if isinstance(exc, openai.APIStatusError):
        return LLMError(
            f"the LLM at {url} answered HTTP {exc.status_code} ({tries}): {_short(exc)}. Check "
            "the server's log; retry later or raise --llm-max-retries"
        )
    return LLMError(f"the LLM at {url} gave an unusable answer ({type(exc).__name__}: {exc})")


def _short(exc: Exception) -> str:
    lines = str(exc).splitlines()
    text = "\n".join(line for line in lines if "For further information" not in line)
    return text if len(text) < 400 else text[:400] + "..."


class LLMClient:
    """A chat model plus the run's usage ledger: every call is accounted and errors translated.

    Example:
        >>> client = LLMClient(make_chat_model(settings), settings)  # doctest: +SKIP
        >>> reply = client.invoke("coder", [("user", "hello")])  # doctest: +SKIP
        >>> client.ledger.totals().calls  # doctest: +SKIP
        1
    """

    def __init__(
        self,
        chat: BaseChatModel,
        settings: LLMSettings,
        ledger: UsageLedger | None = None,
        journal: CallJournal | None = None,
        on_call: Callable[[], None] | None = None,
        deadline: float | None = None,
    ) -> None:
        self.chat = chat
        self.settings = settings
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.journal = journal  # the transcript: written per call, replayed on resume
        self.on_call = on_call  # persists the ledger after every paid call
        self.deadline = deadline  # epoch seconds after which no request is sent
        self._chats: dict[float, BaseChatModel] = {}

    def __repr__(self) -> str:
        return f"LLMClient({self.settings!r}, calls={self.ledger.totals().calls})"

    def over_budget(self, prompt_chars: int = 0) -> str | None:
        """Why the run must stop for budget reasons, or ``None``; ``prompt_chars`` is the next
        request's size (its tokens estimated at 4 characters each, counted in advance)."""
        if self.deadline is not None and time.time() >= self.deadline:
            return "time limit reached: no further LLM request is sent"
        return self.ledger.over_budget(self.settings, upcoming_tokens=prompt_chars // 4)

    def chat_for(self, agent: str) -> BaseChatModel:
        """The chat model at ``agent``'s temperature (structured replies want a low one)."""
        t = self.settings.temperature_for(agent)
        if t == self.settings.temperature:
            return self.chat
        if t not in self._chats:
            self._chats[t] = self.chat.model_copy(update={"temperature": t})
        return self._chats[t]

    def invoke(self, agent: str, messages: list[Any]) -> AIMessage:
        """One chat completion for ``agent``; raises ``LLMError`` on any endpoint failure."""
        return self._call(agent, self.chat_for(agent).invoke, messages)

    def invoke_runnable(
        self, agent: str, runnable: Any, messages: list[Any], schema: type | None = None
    ) -> Any:
        """Invoke a derived runnable (e.g. structured output with ``include_raw=True``)."""
        return self._call(agent, runnable.invoke, messages, schema)

    def _call(
        self, agent: str, fn: Callable[[list[Any]], T], messages: list[Any],
        schema: type | None = None,
    ) -> T:
        sent = message_dicts(messages)
        kind = schema.__name__ if schema is not None else "chat"
        sampling = self.settings.model_copy(
            update={"temperature": self.settings.temperature_for(agent)}
        )
        key = request_key(agent, kind, sent, sampling)
        if self.journal is not None and (hit := self.journal.replay(key)) is not None:
            log.info("%s: reply replayed from the transcript (not sent again)", agent)
            return replayed(hit, schema)  # type: ignore[return-value]
        chars = sum(len(str(m.get("content") or "")) for m in sent)
        if (why := self.over_budget(chars)) is not None:
            raise LLMBudgetError(why)
        started = time.time()
        try:
            out = fn(messages)
        except LLMError:
            raise
        except Exception as exc:
            if _is_openai_error(exc) or isinstance(exc, json.JSONDecodeError):
                raise translate_error(exc, self.settings) from exc
            raise
        raw = out.get("raw") if isinstance(out, dict) else out
        call = self.record(agent, raw)
        if self.journal is not None:
            self.journal.record(transcript_entry(key, agent, kind, sent, raw, call, started))
        if self.on_call is not None:
            self.on_call()
        return out

    def ask(
        self, agent: str, messages: list[Any], parse: Callable[[str], T], want: str = "code"
    ) -> T | None:
        """Ask, parse the reply's text; a malformed reply is counted, fed back once, then dropped.

        ``parse`` raises ``ReplyFormatError`` with a message meant for the model; ``want`` (code,
        edits or json) picks the repair instruction. Returns ``None`` when both replies fail.
        """
        reply = self.invoke(agent, messages)
        try:
            return parse(reply_text(reply))
        except ReplyFormatError as exc:
            self._malformed(agent, exc, dropped=False)
            error = what_went_wrong(reply, exc)
            retry = [*messages, reply, ("user", render("repair.j2", error=error, want=want))]
        reply = self.invoke(agent, retry)
        try:
            return parse(reply_text(reply))
        except ReplyFormatError as exc:
            self._malformed(agent, exc, dropped=True)
            return None

    def ask_structured(
        self,
        agent: str,
        messages: list[Any],
        schema: type[M],
        salvage: Callable[[str], M | None] | None = None,
    ) -> M | None:
        """Ask for a ``schema`` object through a tool call (JSON content accepted as fallback).

        Same repair rule as ``ask``: one round of feedback, then ``None``. ``salvage`` reads a
        prose reply (no tool call, no JSON) into the schema when it can; a salvaged reply is
        counted as malformed but costs no repair request.
        """
        runnable = self.chat_for(agent).with_structured_output(
            schema, method="function_calling", include_raw=True
        )
        for attempt in (1, 2):
            out = self.invoke_runnable(agent, runnable, messages, schema)
            parsed, error = _structured(out, schema)
            if parsed is not None:
                return parsed
            if salvage is not None and (saved := salvage(reply_text(out["raw"]))) is not None:
                self._malformed(
                    agent, ReplyFormatError("prose reply, read by salvage"), dropped=False
                )
                return saved
            self._malformed(agent, error, dropped=attempt == 2)
            messages = [*messages, *_repair_messages(out["raw"], str(error))]
        return None

    def _malformed(self, agent: str, error: Exception, *, dropped: bool) -> None:
        self.ledger.count_malformed(agent, dropped=dropped)
        action = "dropped" if dropped else "fed back"
        log.warning("%s: malformed LLM reply %s: %s", agent, action, str(error)[:300])

    def record(self, agent: str, reply: BaseMessage | None) -> Usage:
        model = model_from_reply(reply)
        call = self.ledger.add(agent, reply or {}, price=self.settings.price_for(model))
        log.debug("%s: %d in / %d out tokens", agent, call.input_tokens, call.output_tokens)
        return call


def transcript_entry(
    key: str, agent: str, kind: str, sent: list[dict], raw: Any, call: Usage, started: float
) -> dict[str, Any]:
    """One transcript line: the request, the reply (replayable), tokens, cost and latency."""
    from langchain_core.messages import message_to_dict

    return {
        "key": key, "agent": agent, "kind": kind, "request": sent,
        "reply": message_to_dict(raw) if raw is not None else None,
        "reply_text": reply_text(raw) if raw is not None else "",
        "finish_reason": finish_reason(raw),
        "input_tokens": call.input_tokens, "output_tokens": call.output_tokens,
        "cost_usd": call.cost_usd, "latency_s": round(time.time() - started, 3),
    }


def replayed(entry: dict[str, Any], schema: type | None) -> Any:
    """A recorded reply as the call returned it (structured calls: raw plus parsed)."""
    from langchain_core.messages import messages_from_dict

    raw = messages_from_dict([entry["reply"]])[0] if entry.get("reply") else None
    if schema is None:
        return raw
    parsed = None
    for call in getattr(raw, "tool_calls", None) or []:
        try:
            parsed = schema.model_validate(call["args"])  # type: ignore[attr-defined]
            break
        except ValidationError:
            continue
    return {"raw": raw, "parsed": parsed, "parsing_error": None}


def finish_reason(reply: Any) -> str | None:
    """The server's ``finish_reason`` of a reply (``length``: cut off at the token limit)."""
    meta = getattr(reply, "response_metadata", None) or {}
    return meta.get("finish_reason")


def what_went_wrong(reply: Any, error: Exception) -> str:
    """The repair prompt's diagnosis: a cut-off or empty reply says so, before the parse error."""
    if finish_reason(reply) == "length":
        return (
            "your reply was cut off at the token limit (finish_reason: length) before it was "
            "complete. Reply shorter: only the edits or the code, no explanation"
        )
    if not reply_text(reply).strip():
        return "your reply was empty"
    return str(error)


def reply_text(reply: Any) -> str:
    """The text of a chat reply (string content, or the text parts of list content)."""
    content = getattr(reply, "content", reply)
    if isinstance(content, str):
        return content
    parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content or []]
    return "".join(parts)


def _structured(out: dict, schema: type[M]) -> tuple[M | None, Exception]:
    if out.get("parsed") is not None:
        return out["parsed"], ValueError()
    error = out.get("parsing_error")
    try:
        return schema.model_validate(extract_json(reply_text(out["raw"]))), ValueError()
    except ReplyFormatError as exc:
        return None, error or exc
    except ValidationError as exc:
        return None, ReplyFormatError(f"the JSON object does not fit the schema: {_short(exc)}")


def _repair_messages(raw: Any, error: str) -> list[Any]:
    from langchain_core.messages import ToolMessage

    text = render("repair.j2", error=_short(Exception(error)), want="json")
    calls = list(getattr(raw, "tool_calls", []) or []) + list(
        getattr(raw, "invalid_tool_calls", []) or []
    )
    ids = [c["id"] for c in calls if c.get("id")]
    if not ids:
        return [raw, ("user", text)]
    return [raw, *(ToolMessage(content=text, tool_call_id=i) for i in ids)]


def _is_openai_error(exc: Exception) -> bool:
    import openai

    return isinstance(exc, openai.OpenAIError)
