"""Crash-safe accounting: the transcript is written per call, a resume replays it, limits hold."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from kernelwright.agents.journal import CallJournal
from kernelwright.agents.llm import LLMClient, make_chat_model
from kernelwright.agents.usage import UsageLedger
from kernelwright.config import LLMSettings
from kernelwright.errors import LLMBudgetError
from kernelwright.graphs.teams import ledger_with_journal
from kernelwright.testing.scripted_llm import ScriptedLLM, reply

QUESTIONS = ["question one", "question two", "question three"]

CHILD = textwrap.dedent('''
    import sys
    from pathlib import Path
    from kernelwright.agents.journal import CallJournal
    from kernelwright.agents.llm import LLMClient, make_chat_model
    from kernelwright.config import LLMSettings

    base_url, folder = sys.argv[1], Path(sys.argv[2])
    settings = LLMSettings(model="scripted-model", base_url=base_url, max_retries=0)
    client = LLMClient(make_chat_model(settings), settings,
                       journal=CallJournal(folder / "transcript.jsonl"))
    client.on_call = lambda: (folder / "usage.json").write_text(client.ledger.model_dump_json())
    for q in QUESTIONS:
        client.invoke("coder", [("user", q)])
''').replace("QUESTIONS", repr(QUESTIONS))


def answer_slowly_once():
    slow = {"done": False}

    def route(body):
        text = body["messages"][-1]["content"]
        n = QUESTIONS.index(text) + 1
        if n == 3 and not slow["done"]:
            slow["done"] = True
            return reply("answer three", usage=(300, 30), delay_s=3.0)
        return reply(f"answer {n}", usage=(100 * n, 10 * n))

    return route


def test_kill_mid_request_then_resume_resends_nothing_and_ledger_matches_server(tmp_path):
    with ScriptedLLM(router=answer_slowly_once()) as server:
        child = subprocess.Popen(  # noqa: S603 - our own interpreter and script
            [sys.executable, "-c", CHILD, server.base_url, str(tmp_path)],
            env={**os.environ, "OPENAI_API_KEY": ""},
        )
        deadline = time.time() + 60
        while len(server.requests) < 3 and time.time() < deadline and child.poll() is None:
            time.sleep(0.05)
        assert len(server.requests) == 3, "the child never sent its third request"
        os.kill(child.pid, signal.SIGKILL)  # mid-request: the third reply is 3 s away
        child.wait()

        settings = LLMSettings(model=server.model, base_url=server.base_url, max_retries=0)
        journal = CallJournal(tmp_path / "transcript.jsonl")
        saved = UsageLedger.model_validate_json((tmp_path / "usage.json").read_text())
        client = LLMClient(make_chat_model(settings), settings,
                           ledger_with_journal(saved, journal, settings), journal=journal)
        answers = [client.invoke("coder", [("user", q)]).content for q in QUESTIONS]
        time.sleep(3.5)  # the killed request's handler wakes, finds its client gone
        served = list(server.served)
        sent = [r["messages"][-1]["content"] for r in server.requests]

    assert answers == ["answer 1", "answer 2", "answer 3"]
    assert sent == QUESTIONS + ["question three"]  # one and two were never sent again
    assert len(served) == 3
    totals = client.ledger.totals()
    assert totals.calls == len(served)
    assert totals.input_tokens == sum(u[0] for _, u in served)
    assert totals.output_tokens == sum(u[1] for _, u in served)
    lines = [json.loads(x) for x in (tmp_path / "transcript.jsonl").read_text().splitlines()]
    assert [e["reply_text"] for e in lines] == ["answer 1", "answer 2", "answer 3"]
    assert all(e["latency_s"] >= 0 and e["request"][0]["content"] for e in lines)


def test_token_limit_is_enforced_before_the_call(scripted_llm, make_client):
    client = make_client(max_tokens=1000)
    scripted_llm.push(reply("a", usage=(600, 100)), reply("never sent"))
    client.invoke("coder", [("user", "short")])
    with pytest.raises(LLMBudgetError, match="token budget"):
        client.invoke("coder", [("user", "x" * 1600)])  # 700 spent + ~400 estimated > 1000
    assert len(scripted_llm.requests) == 1


def test_deadline_stops_requests_mid_round(scripted_llm, make_client):
    client = make_client()
    client.deadline = time.time() - 1
    with pytest.raises(LLMBudgetError, match="time limit"):
        client.invoke("coder", [("user", "late")])
    assert scripted_llm.requests == []


def test_structured_agents_sample_cold(scripted_llm, make_client):
    client = make_client(temperature=0.9, temperatures={"critic": 0.1})
    scripted_llm.push(reply("a"), reply("b"))
    client.invoke("coder", [("user", "q")])
    client.invoke("critic", [("user", "q")])
    temps = [r.get("temperature") for r in scripted_llm.requests]
    assert temps == [0.9, 0.1]


def test_show_transcript_prints_calls_as_plain_text(tmp_path):
    from rich.console import Console

    from kernelwright.config import Settings
    from kernelwright.graphs.store import RunStore
    from kernelwright.report.transcript import print_transcript

    runs = RunStore(tmp_path)
    runs.create_run("r1", {"task": "t", "task_path": "t.py", "backend": "cpp", "budget": 1,
                           "status": "done"})
    journal = CallJournal(runs.transcript_path("r1"))
    journal.record({"key": "k", "agent": "coder", "kind": "chat", "input_tokens": 12,
                    "output_tokens": 3, "latency_s": 0.5, "finish_reason": "length",
                    "request": [{"role": "user", "content": "write [bold]x[/bold]"}],
                    "reply_text": "<<<<<<< SEARCH"})
    console = Console(record=True, width=200)
    print_transcript(console, "r1", Settings(data_dir=tmp_path), tmp_path)
    out = console.export_text()
    assert "coder (chat): 12 in / 3 out tokens, 0.50 s, finish length" in out
    assert "write [bold]x[/bold]" in out and "<<<<<<< SEARCH" in out and "1 calls" in out


def test_structured_replies_replay_parsed(scripted_llm, make_client, tmp_path):
    from kernelwright.agents.critic import CritiqueReply
    from kernelwright.testing.scripted_llm import tool_call

    scripted_llm.push(tool_call("CritiqueReply", {"decision": "search", "diagnosis": "tune"}))
    messages = [("user", "judge this")]
    first = make_client()
    first.journal = CallJournal(tmp_path / "t.jsonl")
    sent = first.ask_structured("critic", messages, CritiqueReply)
    again = make_client()
    again.journal = CallJournal(tmp_path / "t.jsonl")  # a resumed process
    replayed = again.ask_structured("critic", messages, CritiqueReply)
    assert replayed == sent and replayed.decision.value == "search"
    assert len(scripted_llm.requests) == 1 and again.ledger.totals().calls == 0
