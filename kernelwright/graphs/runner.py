"""Start, resume and summarise optimisation runs: the graph wired to a checkpointer and a store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.errors import GraphRecursionError
from pydantic import BaseModel

from kernelwright.config import Settings
from kernelwright.errors import RunStoreError
from kernelwright.graphs.drive import (
    Observer,
    drive,
    has_checkpoint,
    initial_state,
    run_settings,
    step_limit,
)
from kernelwright.graphs.hierarchy import R3Search
from kernelwright.graphs.state import current_profiles, history_of, reference_of
from kernelwright.graphs.store import (  # noqa: F401  (store_root, run_state: re-exported)
    RunStore,
    new_run_id,
    open_checkpointer,
    owner_fields,
    run_state,
    store_root,
)
from kernelwright.graphs.teams import offline_team
from kernelwright.spec import Task
from kernelwright.spec.figures import best_figures  # noqa: F401  (re-exported)
from kernelwright.spec.plan import Profile, best_profile
from kernelwright.spec.result import Level


class RunReport(BaseModel):
    """What ``kernelwright optimize --json`` prints."""

    run_id: str
    task: str
    status: str
    correct: bool
    best_speedup: float | None
    speedup_low: float | None
    speedup_high: float | None
    evaluations: int
    roofline_fraction: float | None
    kernel_path: str | None
    best_candidate: str | None
    store: str
    reason: str | None = None  # why the run stopped (and, when correct is false, why no kernel)
    # What the user should do: "faster" (use the kernel), "keep_pytorch" (the best correct
    # kernel is not faster than eager: the reference itself stays the answer),
    # "no_correct_kernel" (kernelwright.spec.Verdict).
    verdict: str = "no_correct_kernel"
    reference_ms: float | None = None  # the medians behind best_speedup
    candidate_ms: float | None = None
    compile_ms: float | None = None  # torch.compile of the reference, same inputs and clock
    speedup_vs_compile: float | None = None  # compile_ms / candidate_ms (> 1: kernel faster)
    compile_recompiles: int | None = None
    remeasured: bool = False  # the best's figures come from the final re-measurement
    # Which the run chose: "kernel" (best_candidate), "reference" (the task's own Model,
    # measured as a candidate when the framework space is allowed: keep PyTorch) or "none".
    # best_* and the fields above always describe the best kernel, never the reference.
    answer: str = "none"
    reference_candidate_ms: float | None = None  # the reference's own median as a candidate


def start_run(
    task_path: str | Path,
    settings: Settings,
    *,
    run_id: str | None = None,
    store: str | Path | None = None,
    observer: Observer | None = None,
    context_factory=offline_team,
) -> RunReport:
    """Begin a new run (or continue ``run_id`` if it already exists) and drive it to the end."""
    task = Task.from_path(task_path)
    runs = RunStore(store_root(settings, store))
    run_id = run_id or new_run_id(task.name)
    if run_id not in runs.run_ids():
        meta = {
            "task": task.name,
            "task_path": str(task.path),
            "backend": settings.backend,
            "budget": settings.budget,
            "status": "created",
            "llm": settings.llm.model_dump(mode="json") if settings.llm.enabled else None,
        }
        runs.create_run(run_id, meta)
    return resume_run(
        run_id, settings, store=store, observer=observer, context_factory=context_factory
    )


def resume_run(
    run_id: str,
    settings: Settings,
    *,
    store: str | Path | None = None,
    observer: Observer | None = None,
    context_factory=offline_team,
) -> RunReport:
    """Continue a run from its last checkpoint (a finished run just reports). The run keeps
    the backend, budget and LLM endpoint it was started with, unless ``settings.llm`` names
    an endpoint (then that one is used, e.g. after the first was down)."""
    runs = RunStore(store_root(settings, store))
    meta = runs.meta(run_id)
    settings = run_settings(settings, meta, ("backend", "budget"))
    return _drive(runs, run_id, meta, settings, observer, context_factory)


def _drive(runs, run_id, meta, settings, observer, context_factory) -> RunReport:
    """Run the graph to its end; whatever happens, the run's status says what became of it.

    A run records its process and host, so one killed outright reads as ``interrupted``; an
    exception marks it ``failed`` with the error; Ctrl-C marks it ``interrupted``.
    """
    saver = open_checkpointer(runs.root)
    limit = step_limit(settings, settings.budget)
    # No checkpoint yet (new, or killed before its first step): start from the run's metadata.
    initial = None if has_checkpoint(saver, run_id) else initial_state(run_id, meta)
    if meta.get("status") != "done":
        runs.update_meta(run_id, status="running", error=None, **owner_fields())
    try:
        with context_factory(settings, runs, run_id) as ctx:
            state = drive("optimize", ctx, saver, run_id, initial, limit=limit,
                          observer=observer)  # fmt: skip
    except KeyboardInterrupt:
        runs.update_meta(run_id, status="interrupted")
        raise
    except GraphRecursionError as exc:
        runs.update_meta(run_id, status="failed", error=f"step limit reached: {exc}")
        raise RunStoreError(
            f"run {run_id} took more graph steps than its budget allows "
            f"({limit}); this is a bug: please report it with the run store"
        ) from exc
    except Exception as exc:
        runs.update_meta(run_id, status="failed", error=f"{type(exc).__name__}: {exc}")
        raise
    if state.next or state.tasks:
        runs.update_meta(run_id, status="interrupted")
        raise RunStoreError(
            f"run {run_id} stopped before finishing; `kernelwright resume {run_id}`"
        )
    return finish_report(runs, run_id, state.values, settings)


def finish_report(
    runs: RunStore, run_id: str, values: dict[str, Any], settings: Settings
) -> RunReport:
    """Save the best candidate (and the final archive of a hierarchical run); idempotent."""
    profiles: list[Profile] = list(values.get("profiles") or [])
    if runs.archive_path(run_id).exists():
        R3Search(runs, run_id, settings).archive(history_of(values).profiles)
    best = best_profile([*current_profiles(values), *(values.get("confirmed") or [])])
    reference = reference_of(values)
    reason = stop_reason(values, profiles, best)
    kernel_path = None
    if best is not None:
        candidate = runs.load_candidate(run_id, best.candidate_id)
        kernel_path = str(runs.save_best(run_id, candidate.source))
    meta = runs.update_meta(
        run_id,
        status="done",
        best_speedup=best.speedup if best else None,
        evaluations=len(profiles),
        reason=reason,
    )
    return RunReport(
        run_id=run_id,
        task=meta["task"],
        status="done",
        correct=best is not None,
        best_speedup=best.speedup if best else None,
        speedup_low=best.speedup_low if best else None,
        speedup_high=best.speedup_high if best else None,
        evaluations=len(profiles),
        roofline_fraction=best.roofline.fraction if best and best.roofline else None,
        kernel_path=kernel_path,
        best_candidate=best.candidate_id if best else None,
        store=runs.label,
        reason=reason,
        **best_figures(best, reference),
    )


def stop_reason(values: dict[str, Any], profiles: list[Profile], best: Profile | None) -> str:
    """Why the run ended, in one line; without a correct kernel, also why there is none."""
    decisions = values.get("decisions") or []
    why = decisions[-1].reason if decisions else "the run ended before any decision"
    if best is not None:
        return why
    if not profiles:
        return f"no candidate was evaluated: {why}"
    top = max(profiles, key=lambda p: p.level)
    detail = f"; best reached {Level(top.level).name.lower()}" + (
        f" ({' '.join(top.error.split())[:200]})" if top.error else ""
    )
    return f"no correct kernel in {len(profiles)} evaluations{detail}. Stopped: {why}"


