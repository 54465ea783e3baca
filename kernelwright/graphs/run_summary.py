"""What a report shows about one or many runs, read from the run store and the checkpoints.

Everything here is data (pydantic models); ``kernelwright.report`` only renders it. A run's
candidates come in evaluation order from its checkpointed state (the profiles list), their
evidence from the run store's result records. Nothing is evaluated or measured again.

Definitions used by the report:

- speedup ``s = t_ref / t_cand`` (medians); spread ``[q25_ref / q75_cand, q75_ref / q25_cand]``.
- roofline fraction ``t_min / t_cand`` with ``t_min = max(bytes / BW, flops / FLOP_rate)``.
- roofs are recovered from each run's own numbers: a memory-bound task gives
  ``BW = bytes / t_min``, a compute-bound one ``FLOP_rate = flops / t_min``; a roof that no run
  pinned down stays ``None`` (the chart then draws only the roofs it knows).
- KernelBench's ``fast_p`` over tasks: the share of tasks whose best kernel is correct and has
  ``s > p``; ``fast_0`` is the share with any correct kernel. Geometric mean speedup over tasks
  with a correct kernel.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from kernelwright.graphs.store import RunStore, open_checkpointer
from kernelwright.graphs.summary_models import (
    AgentUsage,
    ArchiveCell,
    ArchiveView,
    CandidateRecord,
    Evidence,
    ReportData,
    Roofs,
    RunSummary,
    SourceDiff,
    VariantEvidence,
)
from kernelwright.spec.plan import Profile
from kernelwright.spec.result import Level, verdict_for

__all__ = [
    "AgentUsage",
    "ArchiveCell",
    "ArchiveView",
    "CandidateRecord",
    "Evidence",
    "ReportData",
    "Roofs",
    "RunSummary",
    "SourceDiff",
    "VariantEvidence",
    "build_report_data",
    "implied_roofs",
    "summarize_run",
]


def build_report_data(store_root: str | Path, run_ids: list[str]) -> ReportData:
    """Summaries of ``run_ids`` (unknown ids raise ``RunStoreError`` naming the fix)."""
    store = RunStore(store_root)
    saver = open_checkpointer(store.root)
    try:
        runs = [
            summarize_run(store, run_id, _state(saver, run_id), _finish_times(saver, run_id))
            for run_id in run_ids
        ]
    finally:
        saver.conn.close()
    return ReportData(
        generated=time.time(), store=str(store.root), runs=runs, roofs=implied_roofs(runs)
    )


def _state(saver, run_id: str) -> dict[str, Any]:
    tup = saver.get_tuple({"configurable": {"thread_id": run_id}})
    return dict(tup.checkpoint["channel_values"]) if tup else {}


def _finish_times(saver, run_id: str) -> dict[str, float]:
    """When each candidate's profile first appears in the run's checkpoints (epoch seconds).

    The checkpointer dates every super-step, so this is when the evaluation step that produced
    the profile was saved: wall-clock time, from the same record a resume starts from.
    """
    from datetime import datetime

    first: dict[str, float] = {}
    history = list(saver.list({"configurable": {"thread_id": run_id}}))
    for tup in reversed(history):  # oldest first
        stamp = datetime.fromisoformat(tup.checkpoint["ts"]).timestamp()
        for profile in tup.checkpoint["channel_values"].get("profiles") or []:
            first.setdefault(profile.candidate_id, stamp)
    return first


def summarize_run(
    store: RunStore, run_id: str, state: dict[str, Any], finished: dict[str, float] | None = None
) -> RunSummary:
    """One run's summary from its metadata, checkpointed ``state`` and stored results;
    ``finished`` dates the evaluations (candidate id -> epoch seconds)."""
    meta = store.meta(run_id)
    plan = state.get("plan")
    profiles: list[Profile] = list(state.get("profiles") or [])
    candidates = [_record(store, run_id, p, i) for i, p in enumerate(_unique(profiles), 1)]
    for c in candidates:
        c.finished_at = (finished or {}).get(c.candidate_id)
    archive = _archive(store, run_id, candidates)
    _apply_remeasurement(candidates, list(state.get("confirmed") or []))
    best = _best(candidates)
    return RunSummary(
        run_id=run_id,
        task=str(meta.get("task", "?")),
        backend=str(meta.get("backend", "?")),
        status=str(meta.get("status", "?")),
        budget=meta.get("budget"),
        started=meta.get("started"),
        updated=meta.get("updated"),
        operator_class=plan.operator_class.value if plan else None,
        implementation_space=plan.implementation_space.value if plan else None,
        space_groups=[g.model_dump(mode="json") for g in plan.groups] if plan else [],
        own_kernel_share=plan.own_kernel_share if plan else None,
        strategy=plan.strategy if plan else None,
        flops=plan.flops if plan else None,
        min_bytes=plan.min_bytes if plan else None,
        candidates=candidates,
        best=best,
        evidence=_evidence(store, run_id, best.candidate_id) if best else None,
        best_source=_source_diff(store, run_id, best, candidates) if best else None,
        archive=archive,
        usage=_usage(store, run_id),
        decisions=[f"{d.action.value}: {d.reason}" for d in state.get("decisions") or []],
        verdict=verdict_for(best is not None, best.speedup if best else None).value,
    )


def _apply_remeasurement(candidates: list[CandidateRecord], confirmed: list[Profile]) -> None:
    """Give the re-measured candidates their final figures (graphs/confirm.py): the first
    figures stay in the run store's results; a candidate that failed its re-measurement is
    no longer correct."""
    by_id = {c.candidate_id: c for c in candidates}
    for p in confirmed:
        c = by_id.get(p.candidate_id)
        if c is None:
            continue
        c.remeasured = True
        c.correct = c.correct and p.correct
        if p.correct:
            c.speedup, c.speedup_low, c.speedup_high = p.speedup, p.speedup_low, p.speedup_high
            c.reference_ms, c.candidate_ms, c.compile_ms = (p.reference_ms, p.candidate_ms,
                                                            p.compile_ms)


def _unique(profiles: list[Profile]) -> list[Profile]:
    seen: dict[str, Profile] = {}
    for p in profiles:
        seen.setdefault(p.candidate_id, p)
    return list(seen.values())


def _best(candidates: list[CandidateRecord]) -> CandidateRecord | None:
    """The correct candidate with the fastest own median, as ``spec.plan.best_profile`` ranks
    (re-measured ones first; by ``candidate_ms`` when all kept it, else by speedup; ties: the
    earliest)."""
    correct = [c for c in candidates if c.correct and c.speedup is not None]
    if any(c.remeasured for c in correct):
        correct = [c for c in correct if c.remeasured]
    if not correct:
        return None
    if all(c.candidate_ms for c in correct):
        return max(correct, key=lambda c: (-(c.candidate_ms or 0.0), -c.order))
    return max(correct, key=lambda c: (c.speedup, -c.order))


def _record(store: RunStore, run_id: str, p: Profile, order: int) -> CandidateRecord:
    roof = p.roofline
    try:
        parent = store.load_candidate(run_id, p.candidate_id).parent
    except FileNotFoundError:
        parent = None
    return CandidateRecord(
        candidate_id=p.candidate_id,
        order=order,
        correct=p.correct,
        level=p.level,
        level_name=_level_name(p.level),
        speedup=p.speedup,
        speedup_low=p.speedup_low,
        speedup_high=p.speedup_high,
        flags=list(p.flags),
        error=p.error,
        origin=p.origin or None,
        params=dict(p.params),
        stage=p.stage,
        parent=parent,
        bound=roof.bound if roof else None,
        bound_time_s=roof.bound_time_s if roof else None,
        roofline_fraction=roof.fraction if roof else None,
        achieved_gflops=roof.achieved_gflops if roof else None,
        achieved_gbps=roof.achieved_gbps if roof else None,
        reference_ms=p.reference_ms,
        candidate_ms=p.candidate_ms,
        compile_ms=p.compile_ms,
    )


def _level_name(level: int) -> str:
    try:
        return Level(level).name.lower()
    except ValueError:
        return f"level {level}"


def _evidence(store: RunStore, run_id: str, candidate_id: str) -> Evidence | None:
    record = store.load_result(run_id, candidate_id)
    if record is None:
        return None
    result = record.get("result") or {}
    timing = result.get("timing") or {}
    return Evidence(
        variants=[
            VariantEvidence(
                variant=v["variant"],
                seeds=v["seeds"],
                ok=v["ok"],
                max_abs_error=v.get("max_abs_error"),
                max_rel_error=v.get("max_rel_error"),
            )
            for v in result.get("variants") or []
        ],
        repeats=timing.get("repeats"),
        device=result.get("device"),
        reference_median_s=timing.get("reference_median_s"),
        candidate_median_s=timing.get("candidate_median_s"),
    )


def _archive(
    store: RunStore, run_id: str, candidates: list[CandidateRecord]
) -> ArchiveView | None:
    """Rebuild the archive from the evaluated sources, as the R^3 outer level does."""
    from kernelwright.tools.evolve import MapElitesArchive, describe

    if not candidates:
        return None
    archive = MapElitesArchive()
    for c in candidates:
        try:
            source = store.load_candidate(run_id, c.candidate_id).source
        except FileNotFoundError:
            continue
        cell = archive.cell_of(tuple(describe(source)))
        c.cell = list(cell)
        archive.add_scored(c.candidate_id, cell, c.level, c.speedup)
        archive.end_generation()
    return ArchiveView(
        axes=list(archive.axes),
        levels=archive.levels,
        cells=[
            ArchiveCell(cell=list(cell), candidate_id=e.candidate_id, level=e.level,
                        speedup=e.speedup)  # fmt: skip
            for cell, e in archive.cells().items()
        ],
    )


def _source_diff(
    store: RunStore, run_id: str, best: CandidateRecord, candidates: list[CandidateRecord]
) -> SourceDiff:
    """The best source, diffed against its recorded parent, else the best before it."""
    import difflib

    source = store.load_candidate(run_id, best.candidate_id).source
    against_id, label = best.parent, "parent"
    if against_id is None:
        earlier = [c for c in candidates if c.order < best.order]
        previous = _best(earlier)
        against_id, label = (previous.candidate_id, "previous best") if previous else (None, None)
    if against_id is None:
        return SourceDiff(candidate_id=best.candidate_id, source=source)
    try:
        other = store.load_candidate(run_id, against_id).source
    except FileNotFoundError:
        return SourceDiff(candidate_id=best.candidate_id, source=source)
    diff = difflib.unified_diff(
        other.splitlines(), source.splitlines(), against_id, best.candidate_id, lineterm=""
    )
    return SourceDiff(
        candidate_id=best.candidate_id, source=source, against_id=against_id, against=label,
        diff=list(diff),
    )  # fmt: skip


def _usage(store: RunStore, run_id: str) -> list[AgentUsage]:
    """Per-agent LLM usage from the run's ledger; empty for offline runs."""
    saved = store.load_usage(run_id)
    if saved is None:
        return []
    ledger = json.loads(saved)
    return [
        AgentUsage(agent=agent, **{k: v for k, v in u.items() if k in AgentUsage.model_fields})
        for agent, u in (ledger.get("per_agent") or {}).items()
    ]


def implied_roofs(runs: list[RunSummary]) -> Roofs:
    """The roofs the runs' own roofline numbers imply (the largest seen of each)."""
    bandwidth: list[float] = []
    rate: list[float] = []
    for run in runs:
        if not run.flops or not run.min_bytes:
            continue
        for c in run.candidates:
            if not c.bound_time_s:
                continue
            if c.bound == "memory":
                bandwidth.append(run.min_bytes / c.bound_time_s / 1e9)
            elif c.bound == "compute":
                rate.append(run.flops / c.bound_time_s / 1e9)
    return Roofs(
        bandwidth_gbps=max(bandwidth) if bandwidth else None,
        gflops=max(rate) if rate else None,
    )
