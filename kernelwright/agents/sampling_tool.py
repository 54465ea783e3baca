"""The agent tool ``sample_workload``: representative kernels of a trace folder and their shares.

An agent (or any LangChain caller) passes a trace folder; it gets back the representatives, their
weights, the projected whole-workload cycles (versus the reference timing model) and the kernels
ranked by time share - what to optimise first in application mode.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from kernelwright.config import Settings
from kernelwright.tools.sampler import sample_trace_dir


class SampleWorkloadArgs(BaseModel):
    """Arguments of ``sample_workload``."""

    trace_dir: str = Field(description="Accel-Sim trace folder (kernelslist.g + kernel files)")
    method: str = Field("gcl", description="gcl | pka | sieve | stem | photon | random")
    gpu: str = Field("rtx2080ti", description="GPU of the reference timing model")
    top: int = Field(5, ge=1, description="how many kernels to list by time share")


def sample_workload(trace_dir: str, method: str = "gcl", gpu: str = "rtx2080ti", top: int = 5,
                    settings: Settings | None = None) -> dict[str, Any]:  # fmt: skip
    """Sample a workload; return representatives, weights, projected cycles, top kernels."""
    report = sample_trace_dir(trace_dir, method, gpu=gpu, settings=settings)
    shares = report.time_shares()
    return {
        "workload": report.workload, "method": method, "gpu": report.gpu,
        "invocations": report.invocations,
        "representatives": [{"invocation": r.invocation, "kernel": r.name, "weight": r.weight,
                             "cycles": r.cycles} for r in report.representatives],
        "projected_cycles": report.projected_cycles,
        "top_kernels": [{"kernel": k, "share": s} for k, s in list(shares.items())[:top]],
        "note": "cycles are from the reference timing model, not a measurement",
    }  # fmt: skip


def make_sample_workload_tool(settings: Settings | None = None):
    """``sample_workload`` as a LangChain ``StructuredTool`` (settings bound, not global)."""
    from langchain_core.tools import StructuredTool

    def run(trace_dir: str, method: str = "gcl", gpu: str = "rtx2080ti", top: int = 5):
        return sample_workload(trace_dir, method, gpu, top, settings=settings)

    return StructuredTool.from_function(
        run, name="sample_workload", args_schema=SampleWorkloadArgs,
        description="Pick representative kernel invocations of a long GPU workload trace, "
                    "their weights, the projected total cycles, and the kernels ranked by "
                    "time share (what to optimise first).")  # fmt: skip
