"""Long workloads for sampling: the launch counts that make per-kernel simulation expensive.

Each entry is a workload name and the parameters that make it long: LLM decode loops over many
tokens (the KV cache grows every token, so attention invocations differ), iterative Rodinia-style
apps over many iterations, and PolyBench 3mm (three launches: a sampler's speedup ceiling is 3x).
Launch counts (measured from the launch sequences in this package):

==========  =============================  ================================
workload    parameters                     launches
==========  =============================  ================================
phi2        prompt 16, steps 48            31 per token x 49 = 1,519
qwen15      prompt 16, steps 48            37 per token x 49 = 1,813
pythia      prompt 16, steps 48            33 per token x 49 = 1,617
cfd         1024 elements, 200 iterations  3 + 7 x 200 = 1,403
srad        64 x 64, 300 iterations        2 x 300 = 600
gaussian    N = 96                         2 (N - 1) = 190
lud         N = 256                        3 (N/16 - 1) + 1 = 46
bfs         16,384 nodes                   2 per BFS level
3mm         N = 64                         3
==========  =============================  ================================

Traces are bounded by :data:`SUITE_SAMPLING` (the first 4 CTAs and 2 warps of each CTA), so a
whole suite is a few hundred MB of text before compression; the timing model extrapolates the
sampled CTAs to the full grid by waves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kernelwright.tools.gpusim._trace import TraceSampling

SUITE_SAMPLING = TraceSampling(cta_every=1, max_ctas=4, warps_per_cta=2)


@dataclass(frozen=True)
class SuiteEntry:
    """One long workload: the registry name and its parameter overrides."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)


SAMPLING_SUITE: tuple[SuiteEntry, ...] = (
    SuiteEntry("phi2", {"prompt": 16, "steps": 48}),
    SuiteEntry("qwen15", {"prompt": 16, "steps": 48}),
    SuiteEntry("pythia", {"prompt": 16, "steps": 48}),
    SuiteEntry("cfd", {"elements": 1024, "iterations": 200}),
    SuiteEntry("srad", {"rows": 64, "cols": 64, "iterations": 300}),
    SuiteEntry("gaussian", {"size": 96}),
    SuiteEntry("lud", {"size": 256}),
    SuiteEntry("bfs", {"nodes": 16384}),
    SuiteEntry("3mm", {"size": 64}),
)

# A suite that traces in seconds, for tests and quick checks.
SMALL_SUITE: tuple[SuiteEntry, ...] = (
    SuiteEntry("pythia", {"prompt": 4, "steps": 3}),
    SuiteEntry("cfd", {"elements": 256, "iterations": 3}),
    SuiteEntry("gaussian", {"size": 16}),
)
