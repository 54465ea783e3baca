"""A campaign's figures: KernelBench's metrics beside ours, from the campaign's slice records.

KernelBench (Ouyang et al., 2025) scores a set of tasks with

    fast_p = (1/N) * sum_i 1[correct_i and speedup_i > p]

(``fast_0`` is the fraction of tasks with a correct kernel, ``fast_1`` the fraction with a correct
kernel faster than PyTorch) and the geometric mean speedup over the tasks with a correct kernel.

Ours add what a reader needs to trust those numbers: each task's best speedup with its spread
(the interleaved timing's low/high bounds), the tasks whose whole spread is above 1 ("proven
faster"), the geometric mean over every task counting a task without a correct kernel as 1.0 (the
user keeps the reference), and where the evaluations went (the bandit's allocation).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from kernelwright.graphs.store import RunStore
from kernelwright.graphs.summary_models import fast_p, geomean


class TaskRow(BaseModel):
    task: str
    run_id: str
    evaluations: int
    slices: int
    correct: bool
    speedup: float | None
    speedup_low: float | None
    speedup_high: float | None
    exhausted: bool
    # The run's answer: "kernel", "reference" (keep PyTorch: the reference itself, measured
    # as a candidate, beat every kernel) or "none". ``speedup`` is always the best kernel's.
    chosen: str = "none"


class KernelBenchMetrics(BaseModel):
    tasks: int
    fast_0: float | None  # None: no task
    fast_1: float | None
    geomean_speedup: float | None  # over tasks with a correct kernel


class OurMetrics(BaseModel):
    proven_faster: int  # tasks whose speedup's low bound is above 1
    geomean_all: float  # every task; no correct kernel counts as 1.0
    evaluations: int
    share: dict[str, float]  # fraction of evaluations per task


class CampaignSummary(BaseModel):
    campaign_id: str
    stop_reason: str | None
    evaluations: int
    budget_per_task: int
    run_ids: list[str]
    rows: list[TaskRow]
    kernelbench: KernelBenchMetrics
    ours: OurMetrics


def campaign_summary(state: dict[str, Any], runs: RunStore | None = None) -> CampaignSummary:
    """The summary of a campaign state (``runs`` is accepted for symmetry with the reports)."""
    rows = _rows(state)
    evaluations = sum(r.evaluations for r in rows)
    correct = [r.speedup for r in rows if r.correct and r.speedup]
    kernelbench = KernelBenchMetrics(
        tasks=len(rows),
        fast_0=fast_p([(r.correct, r.speedup) for r in rows], 0.0),
        fast_1=fast_p([(r.correct, r.speedup) for r in rows], 1.0),
        geomean_speedup=geomean(correct),
    )
    ours = OurMetrics(
        proven_faster=sum((r.speedup_low or 0.0) > 1.0 for r in rows if r.correct),
        geomean_all=geomean([r.speedup if r.correct and r.speedup else 1.0 for r in rows]) or 1.0,
        evaluations=evaluations,
        share={r.task: (r.evaluations / evaluations if evaluations else 0.0) for r in rows},
    )
    return CampaignSummary(
        campaign_id=state["campaign_id"],
        stop_reason=state.get("stop_reason"),
        evaluations=evaluations,
        budget_per_task=state["budget_per_task"],
        run_ids=[r.run_id for r in rows if r.slices],
        rows=rows,
        kernelbench=kernelbench,
        ours=ours,
    )


def _rows(state: dict[str, Any]) -> list[TaskRow]:
    latest: dict[str, dict[str, Any]] = {}
    counts: dict[str, int] = {}
    for record in state.get("slices") or []:
        latest[record["task"]] = record
        counts[record["task"]] = counts.get(record["task"], 0) + 1
    rows = []
    for task in state["tasks"]:
        r = latest.get(task, {})
        best = r.get("best_after")
        rows.append(
            TaskRow(
                task=Path(task).stem,
                run_id=r.get("run_id", ""),
                evaluations=r.get("spent", 0),
                slices=counts.get(task, 0),
                correct=best is not None,
                speedup=best,
                speedup_low=r.get("best_low"),
                speedup_high=r.get("best_high"),
                exhausted=r.get("exhausted", False),
                chosen=r.get("chosen", "kernel" if best is not None else "none"),
            )
        )
    return rows


def markdown_summary(summary: CampaignSummary) -> str:
    """A plain Markdown morning summary (the fallback when the HTML report is not installed)."""
    kb, ours = summary.kernelbench, summary.ours
    geo = f"{kb.geomean_speedup:.3f}x" if kb.geomean_speedup else "n/a"
    lines = [
        f"# Campaign {summary.campaign_id}",
        "",
        f"Stopped: {summary.stop_reason or 'not yet'}. Evaluations: {summary.evaluations}.",
        "",
        "| metric | value |",
        "|---|---|",
        f"| KernelBench fast_0 (correct) | {_share(kb.fast_0)} |",
        f"| KernelBench fast_1 (correct and faster) | {_share(kb.fast_1)} |",
        f"| KernelBench geomean speedup (correct tasks) | {geo} |",
        f"| ours: proven faster (low bound > 1) | {ours.proven_faster}/{kb.tasks} |",
        f"| ours: geomean over all tasks (no kernel = 1.0) | {ours.geomean_all:.3f}x |",
        "",
        "| task | speedup [low, high] | chosen | evaluations (share) | slices | state |",
        "|---|---|---|---|---|---|",
    ]
    for r in summary.rows:
        speed = (
            f"{r.speedup:.2f}x [{r.speedup_low or 0:.2f}, {r.speedup_high or 0:.2f}]"
            if r.correct
            else "no correct kernel"
        )
        state = "out of ideas" if r.exhausted else "open"
        if r.evaluations >= summary.budget_per_task:
            state = "budget spent"
        share = ours.share.get(r.task, 0.0)
        used = f"{r.evaluations} ({share:.0%})"
        chosen = "keep PyTorch" if r.chosen == "reference" else r.chosen
        lines.append(f"| {r.task} | {speed} | {chosen} | {used} | {r.slices} | {state} |")
    return "\n".join(lines) + "\n"


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
