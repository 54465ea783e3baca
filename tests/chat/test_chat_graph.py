"""The chat graph: reviews through interrupt/Command(resume), rejections, stop, quit, resume."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.agents.request_parser import OfflineRequestParser
from kernelwright.config import Settings
from kernelwright.errors import ChatError
from kernelwright.graphs.chat_session import ChatSession
from kernelwright.graphs.store import RunStore

from .fakes import FakeEvaluator, FakePlanner, fake_team

TASK = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "l1_gelu.py"


@pytest.fixture
def settings(tmp_path):
    return Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", budget=4)


def new_session(settings, text=f"make {TASK} faster", evaluator=None, planner=None):
    request = OfflineRequestParser().parse(text)
    team = fake_team(evaluator or FakeEvaluator(), planner)
    return ChatSession.create(request, settings, settings.data_dir, context_factory=team)


def reopen(session, evaluator, planner=None):
    team = fake_team(evaluator, planner)
    return ChatSession(session.run_id, session.settings, session.runs.root, context_factory=team)


def test_approve_plan_then_kernel(settings):
    evaluator = FakeEvaluator()
    session = new_session(settings, evaluator=evaluator)
    pause = session.advance(None)
    assert pause.kind == "review" and pause.payload["kind"] == "plan"
    assert evaluator.calls == []  # nothing runs before the plan is approved
    assert "allowed implementation spaces" in pause.payload["contract"]
    pause = session.advance({"approve": True})
    assert pause.kind == "review" and pause.payload["kind"] == "kernel"
    assert pause.payload["evaluations"] == 4 == len(evaluator.calls)
    assert pause.payload["speedup"] == pytest.approx(2.0)  # block 4
    pause = session.advance({"approve": True})
    assert pause.kind == "done"
    run_dir = session.runs.run_dir(session.run_id)
    assert (run_dir / "best" / "candidate.py").read_text() == "# block 4\n"
    meta = session.runs.meta(session.run_id)
    assert meta["status"] == "done" and meta["approved"] == pause.payload["approved"]


def test_rejected_plan_goes_back_to_the_planner_with_the_reason(settings):
    planner = FakePlanner()
    session = new_session(settings, planner=planner)
    first = session.advance(None).payload
    pause = session.advance({"approve": False, "reason": "keep fp32 exact, [bold]no[/bold] BLAS"})
    assert pause.payload["kind"] == "plan" and planner.calls == 2
    assert pause.payload["sources"] == ["b", "a"] != first["sources"]
    assert "atol=0.0 rtol=0.0" in pause.payload["rationale"]  # the planner saw the new contract
    values = session.values()
    assert values["revision"] == 1 and values["feedback"][0]["stage"] == "plan"
    text = Path(values["task_path"]).read_text()
    assert "# rejected because: keep fp32 exact, [bold]no[/bold] BLAS" in text
    # markup splits "no BLAS", so the spaces stay the default (every space)
    assert "'float32': (0.0, 0.0)" in text
    assert "ALLOWED_SPACES = ['custom_kernel', 'vendor_library', 'framework']" in text


def test_rejected_kernel_goes_back_to_the_coder_and_is_not_offered_again(settings):
    evaluator = FakeEvaluator()
    session = new_session(settings, evaluator=evaluator)
    session.advance(None)
    offered = session.advance({"approve": True}).payload
    pause = session.advance({"approve": False, "reason": "too slow, try 4 more evaluations"})
    assert pause.payload["kind"] == "kernel"
    assert pause.payload["budget"] == 8 and len(evaluator.calls) == 8
    assert pause.payload["candidate_id"] != offered["candidate_id"]
    assert session.values()["rejected"] == [offered["candidate_id"]]
    assert "block 7" in session.diff() and "block 8" in session.diff()


def test_quit_keeps_the_thread_and_a_new_process_resumes_it(settings):
    first = FakeEvaluator()
    session = new_session(settings, evaluator=first)
    session.advance(None)
    steps = []
    pause = session.advance(
        {"approve": True},
        emit=lambda n, u: steps.append(n),
        quit_requested=lambda: "evaluate" in steps,
    )
    assert pause.kind == "paused" and 1 <= len(first.calls) < 4
    second = FakeEvaluator()
    again = reopen(session, second)  # a new session object: a new checkpointer connection
    assert again.where().kind == "paused"
    pause = again.advance(None)
    assert pause.payload["kind"] == "kernel" and pause.payload["evaluations"] == 4
    assert set(first.calls).isdisjoint(second.calls)
    logged = again.runs.evaluations(again.run_id)
    assert len(logged) == len(set(logged)) == 4


def test_stop_ends_the_loop_after_the_round_and_offers_the_best(settings):
    evaluator = FakeEvaluator()
    settings = settings.model_copy(update={"budget": 20})
    session = new_session(settings, evaluator=evaluator)
    session.advance(None)
    session.stop_event.set()
    pause = session.advance({"approve": True})
    assert pause.payload["kind"] == "kernel" and pause.payload["evaluations"] == 2
    assert "stopped by the user" in pause.payload["why_stopped"]
    assert "2/20" in session.status()


def test_pasted_module_becomes_the_task(settings):
    text = (
        "make this faster, 1e-3\n```python\nimport torch\n\nclass Model(torch.nn.Module):\n"
        "    def forward(self, x):\n        return torch.relu(x) * 2\n\n"
        "def get_inputs():\n    return [torch.randn(64, 128)]\n```"
    )
    session = new_session(settings, text=text)
    pause = session.advance(None)
    assert "tolerance float32: atol=0.001 rtol=0.001" in pause.payload["contract"]
    assert session.meta["task"] == "chat_relu"


def test_a_request_without_task_and_a_non_chat_run_name_the_fix(settings):
    with pytest.raises(ChatError, match="paste"):
        new_session(settings, text="make it faster")
    RunStore(settings.data_dir).create_run("plain", {"task": "t", "backend": "cpp"})
    with pytest.raises(ChatError, match="kernelwright resume plain"):
        ChatSession("plain", settings, settings.data_dir)


def test_with_an_llm_every_reason_is_quoted_for_the_agents(settings):
    from kernelwright.config import LLMSettings

    request = OfflineRequestParser().parse(f"make {TASK} faster")
    team = fake_team(FakeEvaluator())
    llm = LLMSettings(model="any", base_url="http://127.0.0.1:9/v1")
    with_llm = settings.model_copy(update={"llm": llm})
    session = ChatSession.create(
        request, with_llm, settings.data_dir, context_factory=team, usage_json="{}"
    )
    assert session.runs.load_usage(session.run_id) == "{}"
    resumed = ChatSession(session.run_id, settings, settings.data_dir)  # offline settings
    assert resumed.settings.llm.model == "any"  # the thread keeps its endpoint
    session.advance(None)
    session.advance({"approve": False, "reason": "fuse the two passes into one"})
    text = Path(session.values()["task_path"]).read_text()
    assert "# rejected because: fuse the two passes into one" in text
    assert session.values()["revision"] == 1
