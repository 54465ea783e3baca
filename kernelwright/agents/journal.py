"""The LLM transcript of a run: every request and reply, written the moment the reply arrives.

One JSON line per call (agent, request hash, the request's messages, the reply, tokens,
latency), appended and fsync'ed, so a kill -9 loses at most the request in flight. The usage
ledger of a resumed run is rebuilt from it, and a request already answered is answered again
from it (the n-th identical request gets the n-th recorded reply) instead of being paid twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any


def message_dicts(messages: list[Any]) -> list[dict[str, Any]]:
    """Messages (tuples or LangChain messages) as plain role/content dicts, tool calls kept."""
    out = []
    for m in messages:
        if isinstance(m, tuple):
            out.append({"role": m[0], "content": m[1]})
            continue
        item = {"role": getattr(m, "type", "?"), "content": getattr(m, "content", str(m))}
        if getattr(m, "tool_calls", None):
            item["tool_calls"] = [{"name": c["name"], "args": c["args"]} for c in m.tool_calls]
        if getattr(m, "tool_call_id", None):
            item["tool_call_id"] = m.tool_call_id
        out.append(item)
    return out


def request_key(agent: str, kind: str, messages: list[dict[str, Any]], settings: Any) -> str:
    """A hash of everything that decides the reply: agent, call kind, model, sampling, messages."""
    basis = {
        "agent": agent, "kind": kind, "messages": messages,
        "model": getattr(settings, "model", None),
        "temperature": getattr(settings, "temperature", None),
    }
    return hashlib.sha256(json.dumps(basis, sort_keys=True, default=str).encode()).hexdigest()


class CallJournal:
    """The transcript file of one run; a replay index over the calls recorded before.

    Example:
        >>> journal = CallJournal(tmp / "transcript.jsonl")  # doctest: +SKIP
        >>> journal.replay("k") is None  # doctest: +SKIP
        True
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._recorded: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self._used: dict[str, int] = defaultdict(int)
        for entry in self.entries():
            self._recorded[entry["key"]].append(entry)

    def entries(self) -> list[dict[str, Any]]:
        """Every recorded call, oldest first (a torn last line, from a kill, is skipped)."""
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return out

    def replay(self, key: str) -> dict[str, Any] | None:
        """The next unused recorded call with this request hash, or ``None``."""
        with self._lock:
            recorded = self._recorded.get(key, [])
            n = self._used[key]
            if n >= len(recorded):
                return None
            self._used[key] = n + 1
            return recorded[n]

    def record(self, entry: dict[str, Any]) -> None:
        """Append one call (and count it as used, so a replay never returns it again)."""
        entry = {"time": time.time(), **entry}
        line = json.dumps(entry, default=str) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
            self._recorded[entry["key"]].append(entry)
            self._used[entry["key"]] += 1

    def __repr__(self) -> str:
        return f"CallJournal({str(self.path)!r})"
