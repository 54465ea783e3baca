"""The MCP tools in-process (mcp's own Client on the server object): schemas and bad arguments."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client

from kernelwright.config import Settings
from kernelwright.errors import PathNotAllowedError
from kernelwright.serve.mcp import build_server
from kernelwright.serve.roots import Roots

TOOLS = {"optimize_kernel", "run_status", "best_kernel", "evaluate_kernel", "list_runs",
         "cancel_run", "sample_workload"}  # fmt: skip


def _call(served, calls):
    server, tools = build_server(served["settings"], [served["root"]], served["store"])

    async def go():
        async with Client(server) as client:
            listed = await client.list_tools()
            results = [await client.call_tool(name, args) for name, args in calls]
            return listed, results

    try:
        return anyio.run(go)
    finally:
        tools.background.shutdown()


@pytest.mark.slow
def test_tools_are_typed_and_bad_arguments_are_tool_errors(served):
    outside = str(served["outside"])
    calls = [
        ("optimize_kernel", {"task_path": outside}),
        ("optimize_kernel", {"task_path": str(served["root"] / "l1_gelu.py"), "budget": 0}),
        ("optimize_kernel", {"task_path": str(served["root"] / "l1_gelu.py"), "backend": "x"}),
        ("optimize_kernel", {"task_path": str(served["root"] / "nope.py")}),
        ("evaluate_kernel", {"task_path": str(served["root"] / "l1_gelu.py"),
                             "candidate_path": "/etc/passwd"}),  # fmt: skip
        ("run_status", {"run_id": "../../etc"}),
        ("run_status", {"run_id": "no-such-run"}),
        ("best_kernel", {}),
        ("cancel_run", {"run_id": "done-run"}),
        ("run_status", {"run_id": "done-run"}),
        ("best_kernel", {"run_id": "done-run"}),
        ("list_runs", {"limit": 5}),
    ]
    listed, results = _call(served, calls)
    assert {t.name for t in listed.tools} == TOOLS
    assert all(t.output_schema for t in listed.tools)
    texts = [r.content[0].text if r.content else "" for r in results]
    assert [r.is_error for r in results[:9]] == [True] * 9
    assert "outside the directories this server may read" in texts[0] and "--root" in texts[0]
    assert "budget" in texts[1] and "greater than or equal to 1" in texts[1]
    assert "backend" in texts[2]
    assert "not a file" in texts[3]
    assert "candidate_path '/etc/passwd' is outside" in texts[4]
    assert "run id '../../etc' is not valid" in texts[5]
    assert "no run 'no-such-run'" in texts[6]
    assert "run_id is required" in texts[7] and "pydantic" not in texts[7]
    assert "not running in this server" in texts[8]
    status, best, runs = (r.structured_content for r in results[9:])
    assert status["status"] == "done" and status["evaluations"] == 2
    assert status["process"] == "not started by this server"
    assert "class ModelNew" in best["source"] and best["speedup"] > 0
    assert best["variants_checked"] >= 1 and best["seeds_checked"] >= best["variants_checked"]
    # The session's store is shared: the transport tests' background optimize may have added a run.
    listed_ids = [r["run_id"] for r in runs["runs"]]
    assert "done-run" in listed_ids and len(listed_ids) <= 5


def test_roots_follow_symlinks(tmp_path):
    inside, outside = tmp_path / "in", tmp_path / "out"
    inside.mkdir()
    outside.mkdir()
    (outside / "secret.py").write_text("x = 1\n")
    (inside / "link.py").symlink_to(outside / "secret.py")
    (inside / "ok.py").write_text("x = 1\n")
    roots = Roots([inside])
    assert roots.check(inside / "ok.py") == (inside / "ok.py").resolve()
    with pytest.raises(PathNotAllowedError, match="outside"):
        roots.check(inside / "link.py")
    with pytest.raises(PathNotAllowedError, match="outside"):
        roots.check(inside / ".." / "out" / "secret.py")


@pytest.mark.slow
def test_sample_workload_through_the_agents_tool(tmp_path):
    import shutil

    traces = tmp_path / "root" / "traces"
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "v5_grouped",
                    traces)  # fmt: skip
    settings = Settings(data_dir=tmp_path / "store", cache_dir=tmp_path / "cache")
    served = {"settings": settings, "root": tmp_path / "root", "store": tmp_path / "store"}
    calls = [("sample_workload", {"trace_dir": str(traces), "method": "random", "top": 2}),
             ("sample_workload", {"trace_dir": str(tmp_path)}),
             ("sample_workload", {"trace_dir": str(traces), "method": "astrology"})]  # fmt: skip
    _, (sampled, outside, unknown) = _call(served, calls)
    assert not sampled.is_error, sampled.content
    result = sampled.structured_content
    assert result["method"] == "random" and result["invocations"] >= 1
    assert 1 <= len(result["representatives"]) <= result["invocations"]
    assert sum(r["weight"] for r in result["representatives"]) > 0
    assert 1 <= len(result["top_kernels"]) <= 2 and "timing model" in result["note"]
    assert outside.is_error and "outside the directories" in outside.content[0].text
    assert unknown.is_error and "astrology" in unknown.content[0].text


def test_background_runs_get_the_servers_llm_settings(tmp_path):
    from typer.testing import CliRunner

    from kernelwright.cli import app
    from kernelwright.config import LLMSettings
    from kernelwright.serve.mcp import llm_flags

    assert llm_flags(Settings()) == []
    llm = LLMSettings(model="m1", base_url="http://127.0.0.1:9/v1", api_key_env="MY_KEY",
                      max_tokens=1000, max_cost=0.5)  # fmt: skip
    flags = llm_flags(Settings(llm=llm))
    given = dict(zip(flags[::2], flags[1::2], strict=True))
    assert given["--llm-model"] == "m1" and given["--llm-api-key-env"] == "MY_KEY"
    assert given["--max-tokens"] == "1000" and given["--max-cost"] == "0.5"
    # optimize accepts every flag (the run then fails on the missing task, not on a flag)
    result = CliRunner().invoke(app, ["optimize", str(tmp_path / "missing.py"), *flags])
    assert result.exit_code == 2 and "No such option" not in result.output
    assert "missing.py" in result.output


def test_argument_errors_are_one_plain_line_and_backends_any_case(tmp_path):
    examples = Path(__file__).resolve().parents[2] / "examples"
    settings = Settings(data_dir=tmp_path / "store", cache_dir=tmp_path / "cache")
    served = {"settings": settings, "root": examples, "store": tmp_path / "store"}
    task = str(examples / "tasks" / "l1_gelu.py")
    sycl = str(examples / "candidates" / "l1_gelu_naive_sycl.py")
    calls = [("optimize_kernel", {"task_path": task, "budget": 0}),
             ("optimize_kernel", {"task_path": task, "backend": "gpu"}),
             ("best_kernel", {}),
             ("evaluate_kernel", {"task_path": task, "candidate_path": sycl,
                                  "backend": "CPP"})]  # fmt: skip
    _, results = _call(served, calls)
    texts = [r.content[0].text for r in results]
    assert all(r.is_error for r in results)
    assert texts[0].startswith("optimize_kernel: argument budget=0 is not valid")
    assert "'gpu'" in texts[1] and "'sycl', 'cpp' or 'cuda'" in texts[1]
    assert texts[2] == "best_kernel: argument run_id is required: pass it (see the tool's schema)"
    assert "builds its kernels with sycl, but backend 'cpp'" in texts[3]  # CPP read as cpp
    assert not any("pydantic" in t or "\n" in t for t in texts)
    assert not (tmp_path / "store" / "runs").exists() or not any(
        (tmp_path / "store" / "runs").iterdir())  # no run was started
