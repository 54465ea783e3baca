"""The agent tool `sample_workload` as LangChain sees it."""

from __future__ import annotations

import pytest

from kernelwright.agents.sampling_tool import make_sample_workload_tool


def test_sample_workload_tool(tiny_trace, tmp_settings):
    tool = make_sample_workload_tool(tmp_settings)
    assert tool.name == "sample_workload"
    out = tool.invoke({"trace_dir": str(tiny_trace), "method": "sieve", "top": 2})
    assert out["invocations"] == 26
    assert sum(r["weight"] for r in out["representatives"]) == 26
    assert len(out["top_kernels"]) == 2
    assert out["top_kernels"][0]["share"] >= out["top_kernels"][1]["share"]
    assert out["projected_cycles"] == pytest.approx(
        sum(r["weight"] * r["cycles"] for r in out["representatives"]))
