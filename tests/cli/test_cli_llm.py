"""`kernelwright optimize --llm-base-url URL --llm-model M` against an OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app
from kernelwright.testing.scripted_llm import ScriptedLLM, reply, tool_call

ROOT = Path(__file__).resolve().parents[2]
NAIVE = (ROOT / "examples" / "candidates" / "l1_gelu_naive_sycl.py").read_text()


def route(body):
    tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
    if "PlanReply" in tools:
        return tool_call("PlanReply", {"space": "custom_kernel", "backend": "sycl",
                                       "strategy": "one pass", "rationale": "elementwise"})
    if "CritiqueReply" in tools:
        return tool_call("CritiqueReply", {"decision": "vary_params", "diagnosis": "ok"})
    if "You improve the instructions" in json.dumps(body):
        return reply("no change")
    return reply(f"```python\n{NAIVE}\n```")


@pytest.mark.requires_sycl
@pytest.mark.slow
def test_optimize_with_llm_flags_then_show_reports_usage(tmp_path, monkeypatch):
    monkeypatch.setenv("KW_CLI_TEST_TOKEN", "t0ken")
    store = tmp_path / "store"
    with ScriptedLLM(router=route) as server:
        # budget 2: the first candidate is the lowered kernel, the second the LLM coder's
        args = ["optimize", str(ROOT / "examples" / "tasks" / "l1_gelu.py"), "--budget", "2",
                "--store", str(store), "--run-id", "cli-llm", "--json",
                "--llm-base-url", server.base_url, "--llm-model", server.model,
                "--llm-api-key-env", "KW_CLI_TEST_TOKEN", "--max-tokens", "100000"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert server.requests and all(
            h.get("authorization") == "Bearer t0ken" for h in server.headers
        )
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["correct"] and report["evaluations"] == 2
    shown = CliRunner().invoke(app, ["show", "cli-llm", "--store", str(store)])
    assert shown.exit_code == 0 and "LLM usage" in shown.output and "coder" in shown.output
