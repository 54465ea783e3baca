"""A scripted OpenAI-compatible chat server on 127.0.0.1, for testing the real client path offline.

Standard library only. It serves ``POST /v1/chat/completions`` from a script of replies (text,
tool calls, HTTP errors, malformed bodies), streams them as server-sent events when the request
says ``stream=true``, reports ``usage``, and records every request body for assertions.
``GET /v1/models`` lists the one scripted model.

Example:
    >>> with ScriptedLLM([reply("hello"), error(429), reply("again")]) as llm:  # doctest: +SKIP
    ...     chat = ChatOpenAI(base_url=llm.base_url, api_key="x", model=llm.model)
    ...     chat.invoke("hi").content
    'hello'
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "scripted-model"


@dataclass
class ScriptedReply:
    """One scripted answer. ``body`` (raw text) overrides everything but status and headers."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    body: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    usage: tuple[int, int] | None = (100, 20)  # (prompt_tokens, completion_tokens)
    delay_s: float = 0.0
    finish_reason: str | None = None


def reply(content: str, usage: tuple[int, int] | None = (100, 20), **kw: Any) -> ScriptedReply:
    """A plain assistant message."""
    return ScriptedReply(content=content, usage=usage, **kw)


def tool_call(name: str, arguments: dict[str, Any] | str, **kw: Any) -> ScriptedReply:
    """An assistant message calling tool ``name`` (a str ``arguments`` is sent verbatim)."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ScriptedReply(tool_calls=[{"name": name, "arguments": args}], **kw)


def error(status: int, message: str = "scripted error", retry_after_ms: int = 1) -> ScriptedReply:
    """An HTTP error in OpenAI's error format; ``retry-after-ms`` keeps client retries fast."""
    body = json.dumps({"error": {"message": message, "type": "scripted", "code": str(status)}})
    return ScriptedReply(status=status, body=body, headers={"retry-after-ms": str(retry_after_ms)})


def malformed(body: str = '{"id": "x", "choices": [ {"message": ') -> ScriptedReply:
    """A 200 answer whose body is not valid JSON."""
    return ScriptedReply(body=body)


class ScriptedLLM:
    """The server; a context manager. Replies are consumed in order; an empty script answers 500.

    Attributes:
        requests: the JSON bodies received on /chat/completions, in order.
        headers: the matching request headers (names in lower case).
    """

    def __init__(
        self,
        script: Iterable[ScriptedReply] = (),
        model: str = MODEL,
        router: Callable[[dict[str, Any]], ScriptedReply | None] | None = None,
    ) -> None:
        self.model = model
        self.router = router  # answers a request from its body; None falls back to the script
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        # (body, (prompt_tokens, completion_tokens)) of each reply sent in full: what a paid
        # API would bill
        self.served: list[tuple[dict[str, Any], tuple[int, int]]] = []
        self._script: deque[ScriptedReply] = deque(script)
        self._lock = threading.Lock()
        self._server: _QuietServer | None = None
        self._thread: threading.Thread | None = None

    def push(self, *replies: ScriptedReply) -> None:
        with self._lock:
            self._script.extend(replies)

    @property
    def remaining(self) -> int:
        return len(self._script)

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("ScriptedLLM is not running: use it as a context manager")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedLLM:
        handler = type("Handler", (_Handler,), {"llm": self})
        self._server = _QuietServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> ScriptedReply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            routed = self.router(body) if self.router is not None else None
            if routed is not None:
                return routed
            if self._script:
                return self._script.popleft()
        return error(500, "the scripted LLM has no replies left")

    def __repr__(self) -> str:
        return f"ScriptedLLM(remaining={self.remaining}, received={len(self.requests)})"


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (timeouts in tests) is expected; anything else is reported."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    llm: ScriptedLLM

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base signature
        return

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        if self.path.rstrip("/").endswith("/models"):
            data = {"object": "list", "data": [{"id": self.llm.model, "object": "model"}]}
            return self._send(200, json.dumps(data), {})
        return self._send(404, json.dumps({"error": {"message": "not found"}}), {})

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._send(404, json.dumps({"error": {"message": "not found"}}), {})
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_unparsed": raw.decode(errors="replace")}
        scripted = self.llm._next(body, {k.lower(): v for k, v in self.headers.items()})
        time.sleep(scripted.delay_s)
        if scripted.delay_s and self._client_gone():
            return None  # a cancelled request is not answered nor counted (as vLLM aborts)
        if scripted.body is not None or scripted.status != 200:
            return self._send(scripted.status, scripted.body or "{}", scripted.headers)
        if body.get("stream"):
            self._stream(scripted, body)
        else:
            self._send(200, json.dumps(_completion(scripted, body)), scripted.headers)
        with self.llm._lock:
            self.llm.served.append((body, scripted.usage or (0, 0)))
        return None

    def _client_gone(self) -> bool:
        import select
        import socket

        readable, _, _ = select.select([self.connection], [], [], 0)
        if not readable:
            return False
        try:
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _send(self, status: int, text: str, headers: dict[str, str]) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, scripted: ScriptedReply, body: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        for chunk in _chunks(scripted, body, include_usage):
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


def _message(scripted: ScriptedReply) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": scripted.content}
    if scripted.tool_calls:
        msg["tool_calls"] = [
            {
                "id": call.get("id", f"call_{i}"),
                "type": "function",
                "function": {"name": call["name"], "arguments": call["arguments"]},
            }
            for i, call in enumerate(scripted.tool_calls)
        ]
    return msg


def _finish(scripted: ScriptedReply) -> str:
    return scripted.finish_reason or ("tool_calls" if scripted.tool_calls else "stop")


def _usage(scripted: ScriptedReply) -> dict[str, int] | None:
    if scripted.usage is None:
        return None
    p, c = scripted.usage
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def _completion(scripted: ScriptedReply, body: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", MODEL),
        "choices": [
            {"index": 0, "message": _message(scripted), "finish_reason": _finish(scripted)}
        ],
    }
    if (usage := _usage(scripted)) is not None:
        out["usage"] = usage
    return out


def _chunks(scripted: ScriptedReply, body: dict[str, Any], include_usage: bool):
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", MODEL),
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    yield chunk({"role": "assistant", "content": ""})
    text = scripted.content or ""
    for start in range(0, len(text), 16):
        yield chunk({"content": text[start : start + 16]})
    for i, call in enumerate(_message(scripted).get("tool_calls", [])):
        yield chunk({"tool_calls": [{"index": i, **call}]})
    yield chunk({}, _finish(scripted))
    if include_usage and (usage := _usage(scripted)) is not None:
        last = chunk({})
        last["choices"] = []
        last["usage"] = usage
        yield last
