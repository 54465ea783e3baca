"""A full optimisation run with LLM policies against the scripted server and the REAL harness."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from kernelwright.config import LLMSettings, Settings
from kernelwright.errors import KernelwrightError
from kernelwright.graphs.runner import resume_run, run_state, start_run
from kernelwright.graphs.store import RunStore
from kernelwright.spec.peaks import MachinePeaks
from kernelwright.testing.scripted_llm import ScriptedLLM, reply, tool_call
from kernelwright.tools.peaks import machine_peaks, peaks_dir

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "examples" / "tasks" / "l1_gelu.py"
NAIVE = (ROOT / "examples" / "candidates" / "l1_gelu_naive_sycl.py").read_text()
SECRET = "sk-kernelwright-test-secret"

PLAN = tool_call(
    "PlanReply",
    {"space": "custom_kernel", "backend": "sycl", "strategy": "one fused pass",
     "rationale": "elementwise and memory-bound"},
)
CRITIQUE = tool_call("CritiqueReply", {"decision": "vary_params", "diagnosis": "keep going"})


def _module(source: str):
    return reply(f"Here is the kernel.\n```python\n{source}\n```\n")


def _router(modules: list[str]):
    """Answer by role: plan and critique tool calls, no prompt edits, then the modules in order."""
    queue = list(modules)

    def route(body):
        tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
        if "PlanReply" in tools:
            return PLAN
        if "CritiqueReply" in tools:
            return CRITIQUE
        if "You improve the instructions" in json.dumps(body):
            return reply("The sections are fine as they are.")
        return _module(queue.pop(0)) if queue else None

    return route


def _dumping_env(source: str, secret: str) -> str:
    """The candidate fails to import if it can see ``secret`` or its variable's name in its
    environment (the sandbox lets it write nowhere a test could read, so it cannot report)."""
    spy = (
        "import os as _os, json as _json\n"
        f"_seen = {secret!r} in _json.dumps(dict(_os.environ))\n"
        "if _seen or 'KW_TEST_CREDENTIAL' in _os.environ:\n"
        "    raise RuntimeError('the candidate saw the secret')\n"
    )
    return spy + source


@pytest.fixture
def settings(tmp_path):
    """Machine peaks far above anything reachable, so the roofline never stops these runs."""
    cache = tmp_path / "cache"
    cache.mkdir()
    settings = Settings(data_dir=tmp_path / "data", cache_dir=cache, budget=3)
    machine_peaks(peaks_dir(settings), measure=lambda key: MachinePeaks(
        machine="test", bandwidth_gbps=1e6, gflops=1e9, threads=1, key=key))  # fmt: skip
    return settings


@pytest.mark.requires_sycl
@pytest.mark.slow
def test_llm_run_keeps_the_correct_kernel(settings, tmp_path, monkeypatch):
    monkeypatch.setenv("KW_TEST_CREDENTIAL", SECRET)  # no *_KEY suffix: scrubbed by name
    correct = _dumping_env(NAIVE, SECRET)
    wrong = NAIVE.replace("0.5f", "0.45f")
    assert wrong != NAIVE
    broken = NAIVE.replace("extern \"C\"", "extern \"C\" this does not compile;")
    with ScriptedLLM(router=_router([correct, wrong, broken])) as server:
        llm = LLMSettings(model=server.model, base_url=server.base_url,
                          api_key_env="KW_TEST_CREDENTIAL", max_retries=1)
        # budget 4: the lowered kernel first, then the LLM's three
        run_settings = settings.model_copy(update={"llm": llm, "budget": 4})
        report = start_run(TASK, run_settings, run_id="llm-real")
        requests = list(server.requests)
    state = run_state("llm-real", settings)
    levels = sorted(p.level for p in state["profiles"])
    logged = RunStore(settings.data_dir).evaluations("llm-real")
    why = (levels, logged, state["decisions"], [json.dumps(r)[-300:] for r in requests])
    assert levels == [1, 4, 5, 5], why  # build failed, value mismatch, lowered and LLM correct
    assert report.correct and report.evaluations == 4
    best = RunStore(settings.data_dir).load_candidate("llm-real", report.best_candidate)
    assert "0.45f" not in best.source and "does not compile" not in best.source
    bodies = [json.dumps(r) for r in requests]
    coder_bodies = [b for b in bodies if "ModelNew" in b]
    assert any("float32[256, 4096]" in b for b in coder_bodies)  # the contract
    assert any("level 4" in b or "value" in b for b in coder_bodies[2:])  # profile feedback
    # the correct candidate (level 5) would have failed to import had it seen the secret


@pytest.mark.requires_sycl
@pytest.mark.slow
def test_endpoint_down_is_a_clear_error_and_the_run_resumes(settings):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    down = LLMSettings(model="m", base_url=dead, max_retries=0, timeout_s=5)
    with pytest.raises(KernelwrightError) as err:
        start_run(TASK, settings.model_copy(update={"budget": 1, "llm": down}), run_id="down")
    assert "127.0.0.1" in str(err.value)
    with ScriptedLLM(router=_router([NAIVE])) as server:
        up = LLMSettings(model=server.model, base_url=server.base_url, max_retries=0)
        report = resume_run("down", settings.model_copy(update={"llm": up}))
    assert report.evaluations == 1 and report.correct
