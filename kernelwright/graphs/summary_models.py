"""The report's data: pydantic models of runs, candidates, evidence, archive and usage.

Built by :mod:`kernelwright.graphs.run_summary` from the run store and the checkpoints; rendered
by :mod:`kernelwright.report`. Definitions (speedup spread, roofline fraction, roofs, fast_p) are
stated in :mod:`kernelwright.graphs.run_summary`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from kernelwright.spec.result import verdict_for


class CandidateRecord(BaseModel):
    """One evaluated candidate of a run, in the order it was evaluated (``order`` from 1)."""

    candidate_id: str
    order: int
    correct: bool
    level: int
    level_name: str
    speedup: float | None = None
    speedup_low: float | None = None
    speedup_high: float | None = None
    flags: list[str] = Field(default_factory=list)
    error: str | None = None
    origin: str | None = None  # who wrote the candidate: lowered, tuner:lowered, llm, ...
    params: dict[str, Any] = Field(default_factory=dict)
    stage: str = "outer"
    parent: str | None = None
    bound: str | None = None
    bound_time_s: float | None = None  # the fastest time the roofline allows
    roofline_fraction: float | None = None
    achieved_gflops: float | None = None
    achieved_gbps: float | None = None
    cell: list[int] | None = None  # MAP-Elites descriptor cell
    finished_at: float | None = None  # epoch seconds of the checkpoint that first held it
    reference_ms: float | None = None  # medians of the timing that gave ``speedup``
    candidate_ms: float | None = None
    compile_ms: float | None = None  # torch.compile, same inputs and clock (None: not timed)
    remeasured: bool = False  # figures from the final re-measurement (graphs/confirm.py)
    space: str | None = None  # "framework" for the reference itself (spec/reference.py)


class VariantEvidence(BaseModel):
    """Verification of one shape variant: seeds run and the worst errors seen."""

    variant: str
    seeds: int
    ok: bool
    max_abs_error: float | None = None
    max_rel_error: float | None = None


class Evidence(BaseModel):
    """Why the best kernel is believed: per-variant checks, timing repeats, the device."""

    variants: list[VariantEvidence] = Field(default_factory=list)
    repeats: int | None = None
    device: str | None = None
    reference_median_s: float | None = None
    candidate_median_s: float | None = None

    @property
    def seeds_total(self) -> int:
        return sum(v.seeds for v in self.variants)

    @property
    def max_abs_error(self) -> float | None:
        errors = [v.max_abs_error for v in self.variants if v.max_abs_error is not None]
        return max(errors) if errors else None


class AgentUsage(BaseModel):
    """LLM tokens and cost of one agent (``cost_usd`` None when the price is unknown)."""

    agent: str
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    malformed: int = 0


class ArchiveCell(BaseModel):
    cell: list[int]
    candidate_id: str
    level: int
    speedup: float | None = None


class ArchiveView(BaseModel):
    """The MAP-Elites archive's global view: the elite of each occupied cell."""

    axes: list[str]
    levels: int
    cells: list[ArchiveCell] = Field(default_factory=list)


class SourceDiff(BaseModel):
    """The best kernel's source and what it changed against a reference candidate."""

    candidate_id: str
    source: str
    against_id: str | None = None
    against: str | None = None  # "parent" or "previous best"
    diff: list[str] = Field(default_factory=list)  # unified diff lines


class RunSummary(BaseModel):
    """Everything the report says about one run (one task)."""

    run_id: str
    task: str
    backend: str
    status: str
    budget: int | None = None
    started: float | None = None
    updated: float | None = None
    operator_class: str | None = None
    implementation_space: str | None = None
    space_groups: list[dict] = Field(default_factory=list)  # Plan.groups: per group space, why
    own_kernel_share: float | None = None  # share of the planned program's time in our kernels
    strategy: str | None = None
    flops: float | None = None
    min_bytes: int | None = None
    candidates: list[CandidateRecord] = Field(default_factory=list)
    best: CandidateRecord | None = None
    evidence: Evidence | None = None
    best_source: SourceDiff | None = None
    archive: ArchiveView | None = None
    usage: list[AgentUsage] = Field(default_factory=list)
    decisions: list[str] = Field(default_factory=list)
    # "faster" | "keep_pytorch" | "no_correct_kernel" (kernelwright.spec.Verdict); None: unknown
    verdict: str | None = None
    # Which the run chose: "kernel" (best), "reference" (keep PyTorch) or "none"; the
    # reference itself, timed as a candidate (space framework, not in the budget), or None.
    answer: str | None = None
    reference: CandidateRecord | None = None

    @property
    def outcome(self) -> str:
        """``verdict`` when the run recorded one, else derived from the best kernel's speedup
        (``kernelwright.spec.Verdict`` values: faster / keep_pytorch / no_correct_kernel)."""
        if self.verdict is not None:
            return self.verdict
        best = self.best
        return verdict_for(best is not None, best.speedup if best else None).value

    @property
    def intensity(self) -> float | None:
        """Arithmetic intensity of the task, FLOP per byte moved at least."""
        if not self.flops or not self.min_bytes:
            return None
        return self.flops / self.min_bytes

    @property
    def flags(self) -> list[str]:
        """Every flag raised on any candidate of the run, once each."""
        return sorted({f for c in self.candidates for f in c.flags})

    def best_so_far(self) -> list[tuple[int, float | None]]:
        """``(evaluation number, best correct speedup so far)`` after each evaluation."""
        out, best = [], None
        for c in self.candidates:
            if c.correct and c.speedup is not None and (best is None or c.speedup > best):
                best = c.speedup
            out.append((c.order, best))
        return out

    def best_over_time(self) -> list[tuple[float, float]]:
        """``(epoch seconds, best correct speedup so far)`` at each improvement, when the
        checkpoints date the evaluations (empty otherwise)."""
        out: list[tuple[float, float]] = []
        for c in sorted(self.candidates, key=lambda c: (c.finished_at or 0.0, c.order)):
            if c.finished_at is None or not c.correct or c.speedup is None:
                continue
            if not out or c.speedup > out[-1][1]:
                out.append((c.finished_at, c.speedup))
        return out


class Roofs(BaseModel):
    """The roofs the report draws: this machine's measured peaks (``kernelwright peaks``);
    None where no measurement was given."""

    bandwidth_gbps: float | None = None
    gflops: float | None = None
    machine: str | None = None  # what the peaks were measured on (CPU, cores, threads, torch)
    measured_at: float | None = None
    method: str | None = None
    triad_gbps: float | None = None
    copy_gbps: float | None = None


def fast_p(tasks: Iterable[tuple[bool, float | None]], p: float) -> float | None:
    """KernelBench's ``fast_p`` over ``(correct, speedup)`` per task: the share correct with
    speedup above ``p``; ``None`` for no tasks (the one definition, for reports and campaigns).

    Example:
        >>> fast_p([(True, 2.0), (True, 0.5), (False, None)], 1.0)
        0.3333333333333333
    """
    rows = list(tasks)
    if not rows:
        return None
    return sum(ok and (s or 0.0) > p for ok, s in rows) / len(rows)


def geomean(values: Iterable[float | None]) -> float | None:
    """Geometric mean of the positive values; ``None`` when there is none."""
    positive = [v for v in values if v is not None and v > 0]
    return math.exp(sum(map(math.log, positive)) / len(positive)) if positive else None


class ReportData(BaseModel):
    """A report over one run or a whole campaign."""

    generated: float
    store: str
    runs: list[RunSummary]
    roofs: Roofs

    def fast_p(self, p: float) -> float | None:
        """KernelBench ``fast_p``: share of tasks whose best kernel is correct with s > p."""
        return fast_p([(r.best is not None, r.best.speedup if r.best else None)
                       for r in self.runs], p)  # fmt: skip

    @property
    def fast_0(self) -> float | None:
        """Share of tasks with any correct kernel."""
        if not self.runs:
            return None
        return len([r for r in self.runs if r.best is not None]) / len(self.runs)

    @property
    def geomean_speedup(self) -> float | None:
        return geomean(r.best.speedup for r in self.runs if r.best)

    @property
    def usage_totals(self) -> list[AgentUsage]:
        """Tokens and cost per agent summed over every run."""
        totals: dict[str, AgentUsage] = {}
        for run in self.runs:
            for u in run.usage:
                t = totals.setdefault(u.agent, AgentUsage(agent=u.agent))
                cost = None if None in (t.cost_usd, u.cost_usd) else t.cost_usd + u.cost_usd
                totals[u.agent] = AgentUsage(
                    agent=u.agent,
                    calls=t.calls + u.calls,
                    input_tokens=t.input_tokens + u.input_tokens,
                    output_tokens=t.output_tokens + u.output_tokens,
                    cost_usd=cost,
                    malformed=t.malformed + u.malformed,
                )
        return list(totals.values())
