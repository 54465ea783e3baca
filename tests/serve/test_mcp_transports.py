"""The MCP server as a client meets it: a `kernelwright mcp` process over stdio and over HTTP."""

from __future__ import annotations

import socket
import subprocess
import time

import anyio
import pytest
from mcp import Client, StdioServerParameters

from .conftest import server_args

pytestmark = pytest.mark.slow


async def _wait_for(client, run_id, done, timeout=300.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = (await client.call_tool("run_status", {"run_id": run_id})).structured_content
        if done(status):
            return status
        await anyio.sleep(0.5)
    raise AssertionError(f"run {run_id} did not get there in {timeout} s: {status}")


def test_stdio_optimize_in_background_then_best_and_evaluate(served):
    command, *args = server_args(served)
    params = StdioServerParameters(command=command, args=args, env=served["env"])
    task = str(served["root"] / "l1_gelu.py")

    async def go():
        async with Client(params) as client:
            t0 = time.monotonic()
            started = await client.call_tool("optimize_kernel", {"task_path": task})
            returned_in = time.monotonic() - t0
            assert not started.is_error, started.content
            run_id = started.structured_content["run_id"]
            # a second run, cancelled while it works
            long = await client.call_tool("optimize_kernel", {"task_path": task, "budget": 500})
            long_id = long.structured_content["run_id"]
            await _wait_for(client, long_id, lambda s: s["status"] != "starting")
            cancelled = await client.call_tool("cancel_run", {"run_id": long_id})
            final = await _wait_for(client, run_id, lambda s: s["process"] != "running")
            best = await client.call_tool("best_kernel", {"run_id": run_id})
            verdict = await client.call_tool("evaluate_kernel", {
                "task_path": task, "candidate_path": str(served["root"] / "best_candidate.py")})
            outside = await client.call_tool("evaluate_kernel", {
                "task_path": str(served["outside"]), "candidate_path": task})
            listed = await client.call_tool("list_runs", {})
            return returned_in, final, cancelled, best, verdict, outside, listed, run_id, long_id

    returned_in, final, cancelled, best, verdict, outside, listed, run_id, long_id = anyio.run(go)
    assert returned_in < 10, f"optimize_kernel blocked for {returned_in:.1f} s"
    assert final["process"] == "finished" and final["status"] == "done", final
    assert final["evaluations"] == 2
    assert cancelled.structured_content["status"] == "cancelled"
    assert cancelled.structured_content["process"] == "cancelled"
    assert "class ModelNew" in best.structured_content["source"]
    assert verdict.structured_content["correct"] is True, verdict.structured_content
    assert outside.is_error and "outside the directories" in outside.content[0].text
    ids = [r["run_id"] for r in listed.structured_content["runs"]]
    assert {run_id, long_id, "done-run"} <= set(ids)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited: {proc.stderr.read().decode()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"nothing listened on {port} within {timeout} s")


def test_http_bad_arguments_and_roots(served):
    port = _free_port()
    proc = subprocess.Popen(
        server_args(served, "--transport", "http", "--port", str(port)),
        env=served["env"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        _wait_for_port(port, proc)

        async def go():
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                tools = await client.list_tools()
                outside = await client.call_tool(
                    "optimize_kernel", {"task_path": str(served["outside"])}
                )
                bad = await client.call_tool("list_runs", {"limit": "many"})
                traversal = await client.call_tool("best_kernel", {"run_id": "../done-run"})
                best = await client.call_tool("best_kernel", {"run_id": "done-run"})
                return tools, outside, bad, traversal, best

        tools, outside, bad, traversal, best = anyio.run(go)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert len(tools.tools) == 7
    assert outside.is_error and "outside the directories" in outside.content[0].text
    assert bad.is_error and "limit" in bad.content[0].text
    assert traversal.is_error and "is not valid" in traversal.content[0].text
    assert not best.is_error and best.structured_content["run_id"] == "done-run"
