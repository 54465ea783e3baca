"""``kernelwright show RUN --transcript``: every LLM request and reply of a run, in order."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.text import Text

from kernelwright.config import Settings
from kernelwright.errors import RunStoreError
from kernelwright.graphs.store import RunStore, store_root

SHOWN = 600  # characters of each request's last message and each reply


def print_transcript(
    console: Console, run_id: str, settings: Settings, store: Path | None
) -> None:
    """One block per call: agent, tokens, latency, finish reason, the last message sent (cut)
    and the reply (cut). Model text is printed as plain text, never as markup."""
    runs = RunStore(store_root(settings, store))
    runs.meta(run_id)  # an unknown run fails here with the usual message
    path = runs.transcript_path(run_id)
    if not path.exists():
        raise RunStoreError(
            f"run {run_id} has no LLM transcript ({path}): it ran without an LLM, or before "
            "transcripts were kept"
        )
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for n, e in enumerate(entries, 1):
        sent = e.get("request") or []
        chars = sum(len(str(m.get("content") or "")) for m in sent)
        head = (
            f"#{n} {e['agent']} ({e.get('kind', 'chat')}): {e['input_tokens']} in / "
            f"{e['output_tokens']} out tokens, {e.get('latency_s', 0):.2f} s, finish "
            f"{e.get('finish_reason') or '?'}, prompt {chars} chars"
        )
        console.rule(Text(head))
        last = str(sent[-1].get("content") or "") if sent else ""
        console.print(Text("sent (last message): " + _cut(last), style="dim"))
        console.print(Text("reply: " + _cut(e.get("reply_text") or "")))
    console.print(Text(f"{len(entries)} calls"))


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN else text[:SHOWN] + f" ... ({len(text) - SHOWN} more)"
