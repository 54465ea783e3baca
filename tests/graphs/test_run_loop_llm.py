"""The run loop with a chatty LLM (prose around one fenced module, every time), through the real
client against the scripted OpenAI-compatible server: requests are capped, repeats are answered
then handed to the offline coder, prose critiques are read, and the run ends."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from kernelwright.agents.critic import RuleCritic
from kernelwright.agents.llm_team import make_llm_policies
from kernelwright.agents.profiler import RooflineProfiler
from kernelwright.config import LLMSettings, Settings
from kernelwright.graphs.optimize import OptimizeContext
from kernelwright.graphs.runner import run_state, start_run
from kernelwright.graphs.teams import capped_llm_settings
from kernelwright.spec.result import EvalResult, Level, Timing
from kernelwright.testing.scripted_llm import ScriptedLLM, reply

from .fakes import PEAKS, FakeCoder, FakePlanner

TASK = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "l1_gelu.py"
MODULE = (
    "Sure! Here is a faster kernel. It fuses the ops and avoids temporaries.\n\n"
    "```python\nimport torch\n\n\nclass ModelNew(torch.nn.Module):\n"
    "    def forward(self, x):\n        return torch.nn.functional.gelu(x)\n```\n\n"
    "Let me know if you want more changes!"
)


class AnyEvaluator:
    """Every candidate correct at 1.2x; counts calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, task, candidate):
        self.calls.append(candidate.id)
        timing = Timing(
            reference_median_s=1.2e-3,
            reference_iqr_s=1e-5,
            candidate_median_s=1e-3,
            candidate_iqr_s=1e-5,
            repeats=10,
            speedup=1.2,
            speedup_low=1.1,
            speedup_high=1.3,
        )
        return EvalResult(
            task_name=task.name,
            candidate_id=candidate.id,
            backend="torch",
            level=Level.CORRECT,
            timing=timing,
        )


class EmptyCoder:
    def propose(self, task, contract, plan, history, n):
        return []


def chatty(critic_text: str):
    """Tool-call requests (planner, critic) get ``critic_text``; code requests get MODULE."""

    def route(body):
        return reply(critic_text if body.get("tools") else MODULE)

    return route


def llm_factory(llm: ScriptedLLM, fallback_coder, evaluator, **llm_overrides):
    @contextlib.contextmanager
    def make(settings, store, run_id):
        llm_settings = LLMSettings(
            model=llm.model, base_url=llm.base_url, max_retries=0, **llm_overrides
        )
        settings = settings.model_copy(update={"llm": llm_settings})
        team = make_llm_policies(
            capped_llm_settings(settings),
            FakePlanner(),
            fallback_coder,
            RuleCritic(max_idle_rounds=settings.max_idle_rounds),
        )
        make.team = team
        yield OptimizeContext(
            settings=settings,
            store=store,
            planner=team.planner,
            coder=team.coder,
            profiler=RooflineProfiler(PEAKS),
            critic=team.critic,
            evaluate=evaluator,
        )

    return make


@pytest.fixture
def settings(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    return Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", budget=4)


def test_a_model_that_repeats_itself_is_capped_and_the_run_ends(settings):
    evaluator = AnyEvaluator()
    with ScriptedLLM(router=chatty("I think we should stop here.")) as llm:
        make = llm_factory(llm, EmptyCoder(), evaluator)
        report = start_run(TASK, settings, run_id="chatty", context_factory=make)
        requests = len(llm.requests)
    assert report.correct and report.evaluations == 1 == len(evaluator.calls)
    # 4 evaluations x 10 requests is the default cap; the loop ends far below it
    assert requests <= settings.budget * settings.llm_requests_per_eval
    state = run_state("chatty", settings)
    assert len(state["round_sizes"]) <= 1 + settings.max_idle_rounds
    repeats = [r for r in llm.requests if "already evaluated" in json.dumps(r)]
    assert repeats, "the coder never told the model that it repeated a kernel"


def test_after_repeats_the_offline_coder_steps_in(settings):
    evaluator = AnyEvaluator()
    with ScriptedLLM(router=chatty("Decision: vary params, the tiles are small.")) as llm:
        report = start_run(
            TASK,
            settings,
            run_id="fallback",
            context_factory=llm_factory(llm, FakeCoder(), evaluator),
        )
    assert report.evaluations == settings.budget  # the budget is spent, not wasted on repeats
    assert len(set(evaluator.calls)) == settings.budget


def test_prose_critiques_are_read_not_dropped(settings):
    with ScriptedLLM(router=chatty("Looking at it, I'd vary params: the tiles are small.")) as llm:
        make = llm_factory(llm, FakeCoder(), AnyEvaluator())
        start_run(TASK, settings, run_id="prose", context_factory=make)
        ledger = make.team.client.ledger.per_agent
    decisions = run_state("prose", settings)["decisions"]
    assert any("tiles are small" in d.reason for d in decisions)
    critic = ledger["critic"]
    assert critic.dropped == 0 and critic.calls == critic.malformed  # one request each, read


def test_the_request_cap_holds_without_token_or_cost_limits(settings):
    with ScriptedLLM(router=chatty("vary params")) as llm:
        report = start_run(
            TASK,
            settings,
            run_id="cap",
            context_factory=llm_factory(llm, EmptyCoder(), AnyEvaluator(), max_requests=3),
        )
        requests = len(llm.requests)
    assert requests <= 3
    assert "request cap reached" in report.reason
