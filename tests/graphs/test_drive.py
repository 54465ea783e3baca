"""The one run-loop driver: every entry point streams through ``graphs.drive.drive``, each graph
is compiled once per process, and each run's data reaches the nodes through the runtime
context (two runs in one process never see each other's team)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.agents.request_parser import OfflineRequestParser
from kernelwright.config import Settings
from kernelwright.graphs import drive as drive_mod
from kernelwright.graphs.campaign_slice import SliceRunner
from kernelwright.graphs.chat_session import ChatSession
from kernelwright.graphs.runner import resume_run, start_run
from kernelwright.graphs.store import RunStore
from kernelwright.serve.tool import Optimizer

from .fakes import FakeEvaluator, fake_context_factory

TASK = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "l1_gelu.py"


@pytest.fixture
def settings(tmp_path):
    return Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", budget=4)


@pytest.fixture
def streams(monkeypatch):
    """(graph kind, thread id) of every stream the driver starts."""
    seen: list[tuple[str, str]] = []
    real = drive_mod.graph_for

    def spy(kind, checkpointer):
        graph = real(kind, checkpointer)
        stream = graph.stream

        def recorded(start, config, **kw):
            seen.append((kind, config["configurable"]["thread_id"]))
            return stream(start, config, **kw)

        graph.stream = recorded
        return graph

    monkeypatch.setattr(drive_mod, "graph_for", spy)
    return seen


def test_every_entry_point_drives_through_one_path_and_one_compiled_graph(settings, streams):
    factory = fake_context_factory(FakeEvaluator())
    start_run(TASK, settings, run_id="opt", context_factory=factory)
    resume_run("opt", settings, context_factory=factory)  # a finished run: streams once more
    Optimizer(settings, context_factory=factory).run(str(TASK), budget=2, run_id="tool")
    runs = RunStore(settings.data_dir)
    with SliceRunner(settings, runs, context_factory=factory) as runner:
        outcome = runner.run("camp--l1_gelu", str(TASK), target=2, meta={})
        assert outcome.spent == 2
    request = OfflineRequestParser().parse(f"make {TASK} faster")
    session = ChatSession.create(request, settings, settings.data_dir, context_factory=factory)
    assert session.advance(None).kind == "review"
    threads = {thread for _, thread in streams}
    assert {"opt", "tool", "camp--l1_gelu", session.run_id} <= threads
    assert {kind for kind, _ in streams} == {"optimize", "chat"}
    # Many runs and a chat thread in this process: each graph compiled at most once, ever.
    assert drive_mod.compiles["optimize"] == 1 and drive_mod.compiles["chat"] == 1


def test_runs_in_one_process_each_use_their_own_team(settings):
    first, second = FakeEvaluator(), FakeEvaluator()
    a = start_run(TASK, settings, run_id="a", context_factory=fake_context_factory(first))
    b = start_run(TASK, settings.model_copy(update={"budget": 3}), run_id="b",
                  context_factory=fake_context_factory(second))  # fmt: skip
    assert (a.evaluations, b.evaluations) == (4, 3)
    assert (len(first.calls), len(second.calls)) == (4, 3)  # nothing crossed between runs


def test_resume_keeps_the_run_settings_unless_an_endpoint_is_named(settings):
    meta = {"backend": "cpp", "budget": 9, "llm": {"base_url": "http://x/v1", "model": "m"}}
    merged = drive_mod.run_settings(settings, meta, ("backend", "budget"))
    assert (merged.backend, merged.budget, merged.llm.model) == ("cpp", 9, "m")
    named = settings.model_copy(update={"llm": settings.llm.model_copy(update={
        "base_url": "http://y/v1", "model": "other"})})  # fmt: skip
    assert drive_mod.run_settings(named, meta, ("backend",)).llm.model == "other"


def test_an_unknown_graph_kind_names_the_choices(settings):
    with pytest.raises(ValueError, match="chat"):
        drive_mod.graph_for("nope", None)
