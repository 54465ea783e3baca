"""What a report shows about one or many runs, read from the run store and the checkpoints.

Everything here is data (pydantic models); ``kernelwright.report`` only renders it. A run's
candidates come in evaluation order from its checkpointed state (the profiles list), their
evidence from the run store's result records. Nothing is evaluated or measured again.

Definitions used by the report:

- speedup ``s = t_ref / t_cand`` (medians); spread ``[q25_ref / q75_cand, q75_ref / q25_cand]``.
- roofline fraction ``t_min / t_cand`` with ``t_min = max(bytes / BW, flops / FLOP_rate)``.
- roofs are this machine's measured peaks (``kernelwright peaks``: STREAM triad/copy and
  the vendor SGEMM), passed in by the caller; every candidate's roofline position is computed
  again against them, so the table and the chart use the same roofs. Without peaks the
  runs' stored fractions are shown and no roof is drawn.
- KernelBench's ``fast_p`` over tasks: the share of tasks whose best kernel is correct and has
  ``s > p``; ``fast_0`` is the share with any correct kernel. Geometric mean speedup over tasks
  with a correct kernel.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from kernelwright.agents.profiler import roofline_for
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
from kernelwright.spec.peaks import MachinePeaks
from kernelwright.spec.plan import Profile
from kernelwright.spec.reference import answer_of, chosen_label, latest_reference
from kernelwright.spec.result import Level, Verdict, verdict_for

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
    "roofs_of",
    "summarize_run",
]


def build_report_data(
    store_root: str | Path, run_ids: list[str], peaks: MachinePeaks | None = None
) -> ReportData:
    """Summaries of ``run_ids`` (unknown ids raise ``RunStoreError`` naming the fix), placed
    under the measured ``peaks`` when given."""
    store = RunStore(store_root)
    saver = open_checkpointer(store.root)
    try:
        runs = [
            summarize_run(store, run_id, _state(saver, run_id), _finish_times(saver, run_id))
            for run_id in run_ids
        ]
    finally:
        saver.conn.close()
    for run in runs:
        _fill_times(store, run)
        if peaks is not None:
            _place(run, peaks)
    return ReportData(generated=time.time(), store=store.label, runs=runs,
                      roofs=roofs_of(peaks))  # fmt: skip


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
    _apply_remeasurement(candidates, list(state.get("challenged") or []), final=False)
    archive = _archive(store, run_id, candidates)
    _apply_remeasurement(candidates, list(state.get("confirmed") or []))
    best = _best(candidates)
    reference = latest_reference(state)
    answer = answer_of(best, reference)
    verdict = verdict_for(best is not None, best.speedup if best else None)
    if verdict == Verdict.FASTER and answer is not best:
        verdict = Verdict.KEEP_PYTORCH  # the reference itself, timed as a candidate, won
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
        verdict=verdict.value,
        answer=chosen_label(answer),
        reference=_record(store, run_id, reference, 0) if reference is not None else None,
    )


def _apply_remeasurement(candidates: list[CandidateRecord], confirmed: list[Profile],
                         final: bool = True) -> None:
    """Give the re-measured candidates their latest figures (a challenge during the search,
    then the final re-measurement, graphs/confirm.py): the first figures stay in the run
    store's results; a candidate that failed its re-measurement is no longer correct."""
    by_id = {c.candidate_id: c for c in candidates}
    for p in confirmed:
        c = by_id.get(p.candidate_id)
        if c is None:
            continue
        c.remeasured = c.remeasured or final
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
        space=p.space,
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


def roofs_of(peaks: MachinePeaks | None) -> Roofs:
    """The report's roofs: the measured ``peaks`` (unknown roofs without them)."""
    if peaks is None:
        return Roofs()
    return Roofs(
        bandwidth_gbps=peaks.bandwidth_gbps, gflops=peaks.gflops, machine=peaks.machine,
        measured_at=peaks.measured_at, method=peaks.method or None,
        triad_gbps=peaks.triad_gbps, copy_gbps=peaks.copy_gbps,
    )  # fmt: skip


def _place(run: RunSummary, peaks: MachinePeaks) -> None:
    """Every timed candidate's roofline position against ``peaks``."""
    if not run.flops or not run.min_bytes:
        return
    for c in run.candidates:
        seconds = _seconds(run, c)
        if seconds is None:
            continue
        roof = roofline_for(run.flops, run.min_bytes, peaks, seconds)
        c.bound, c.bound_time_s = roof.bound, roof.bound_time_s
        c.roofline_fraction, c.achieved_gflops = roof.fraction, roof.achieved_gflops
        c.achieved_gbps = roof.achieved_gbps


def _seconds(run: RunSummary, c: CandidateRecord) -> float | None:
    """The candidate's median time: stored, else implied by its stored roofline numbers."""
    if c.candidate_ms:
        return c.candidate_ms / 1e3
    if c.achieved_gflops and run.flops:
        return run.flops / (c.achieved_gflops * 1e9)
    return None


def _fill_times(store: RunStore, run: RunSummary) -> None:
    """Medians in ms from the stored results, for records that do not carry them."""
    for c in run.candidates:
        if not c.correct or c.reference_ms is not None:
            continue
        record = store.load_result(run.run_id, c.candidate_id) or {}
        timing = (record.get("result") or {}).get("timing") or {}
        ms = {k: timing.get(f"{k}_median_s") for k in ("reference", "candidate", "compile")}
        c.reference_ms = ms["reference"] * 1e3 if ms["reference"] else None
        c.candidate_ms = ms["candidate"] * 1e3 if ms["candidate"] else c.candidate_ms
        c.compile_ms = ms["compile"] * 1e3 if ms["compile"] else c.compile_ms
