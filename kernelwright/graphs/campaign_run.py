"""Start and resume campaigns: the campaign graph wired to the checkpointer and the run store.

A campaign's ``meta.json`` (``kind: "campaign"``) holds everything a resume needs: the task
files, the deadline, the per-task budget, the slice size, the LLM budgets, the backend.
"""

from __future__ import annotations

import contextlib
import functools
import time
from pathlib import Path
from typing import Any

from kernelwright.config import LLMSettings, Settings
from kernelwright.errors import CampaignError
from kernelwright.graphs.bandit import SlidingWindowUCB
from kernelwright.graphs.campaign import (
    build_campaign_graph,
    campaign_meta,
    new_campaign_state,
    task_dir_files,
)
from kernelwright.graphs.campaign_metrics import CampaignSummary, campaign_summary
from kernelwright.graphs.campaign_slice import SliceRunner
from kernelwright.graphs.store import RunStore, new_run_id, open_checkpointer
from kernelwright.graphs.teams import offline_team
from kernelwright.tools.cluster import open_pool

Observer = Any  # (event, data) -> None


def start_campaign(
    task_dir: str | Path,
    settings: Settings,
    root: str | Path,
    *,
    hours: float,
    budget_per_task: int | None = None,
    slice_evals: int = 2,
    max_tokens: int | None = None,
    max_cost: float | None = None,
    campaign_id: str | None = None,
    observer: Observer | None = None,
    context_factory=offline_team,
    parallel: int | None = None,
) -> CampaignSummary:
    """Create a campaign over every task file of ``task_dir`` and drive it to its end;
    ``parallel`` tasks are sliced at once (default: one per evaluation worker of
    ``settings.cluster``, else 1)."""
    if hours <= 0 or slice_evals < 1:
        raise CampaignError("a campaign needs --hours > 0 and a slice of at least 1 evaluation")
    if parallel is not None and parallel < 1:
        raise CampaignError(f"--parallel {parallel} is not valid: give 1 or more tasks at once")
    tasks = task_dir_files(task_dir)
    runs = RunStore(root)
    campaign_id = campaign_id or new_run_id(f"campaign-{Path(task_dir).resolve().name}")
    if campaign_id not in runs.run_ids():
        runs.create_run(
            campaign_id,
            {
                "kind": "campaign",
                "task": f"campaign:{Path(task_dir).resolve().name} ({len(tasks)} tasks)",
                "task_path": str(Path(task_dir).resolve()),
                "tasks": tasks,
                "backend": settings.backend,
                "budget": (budget_per_task or settings.budget) * len(tasks),
                "budget_per_task": budget_per_task or settings.budget,
                "slice_evals": slice_evals,
                "hours": hours,
                "max_tokens": max_tokens,
                "max_cost": max_cost,
                "parallel": parallel,
                "status": "created",
                "llm": settings.llm.model_dump(mode="json") if settings.llm.enabled else None,
            },
        )
    return resume_campaign(
        campaign_id, settings, root, observer=observer, context_factory=context_factory
    )


def resume_campaign(
    campaign_id: str,
    settings: Settings,
    root: str | Path,
    *,
    observer: Observer | None = None,
    context_factory=offline_team,
    hours: float | None = None,
) -> CampaignSummary:
    """Continue a campaign from its last checkpoint (a finished one just reports).

    ``hours`` extends it: its deadline becomes ``hours`` from now, and a campaign that had
    finished (on its time limit, say) runs on from its last slice.
    """
    runs = RunStore(root)
    meta = campaign_meta(runs, campaign_id)
    if hours is not None:
        if hours <= 0:
            raise CampaignError(f"--hours {hours:g} is not valid: give a positive number of hours")
        runs.update_meta(campaign_id, deadline=time.time() + hours * 3600.0,
                         hours=float(meta["hours"]) + hours)  # fmt: skip
    update: dict[str, Any] = {"backend": meta["backend"], "time_limit_s": None}
    if not settings.llm.enabled and meta.get("llm"):  # the endpoint the campaign began with
        update["llm"] = LLMSettings(**meta["llm"])
    settings = settings.model_copy(update=update)
    saver = open_checkpointer(runs.root)
    config = {"configurable": {"thread_id": campaign_id}, "recursion_limit": 100_000}
    initial = None
    if saver.get_tuple(config) is None:
        initial = new_campaign_state(
            campaign_id,
            meta["tasks"],
            hours=meta["hours"],
            budget_per_task=meta["budget_per_task"],
            slice_evals=meta["slice_evals"],
            started=meta["started"],
            max_tokens=meta.get("max_tokens"),
            max_cost=meta.get("max_cost"),
        )
    runs.update_meta(campaign_id, status="running")
    with contextlib.ExitStack() as stack:
        parallel = meta.get("parallel")
        if settings.cluster:  # one pool of device workers for every task's team
            pool = stack.enter_context(open_pool(settings))
            context_factory = functools.partial(context_factory, pool=pool)
            parallel = parallel or len(pool.actors)
        parallel = max(1, int(parallel or 1))
        if initial is not None:
            initial["parallel"] = parallel
        runner = stack.enter_context(SliceRunner(settings, runs, context_factory=context_factory,
                                                 max_open=max(3, parallel)))
        graph = build_campaign_graph(runner, SlidingWindowUCB(), saver, observer)
        if hours is not None and initial is None and not graph.get_state(config).next:
            # finished: reopen the loop after its last slice ("work" -> "choose")
            graph.update_state(config, {"status": "running", "stop_reason": ""}, as_node="work")
        for _ in graph.stream(initial, config, stream_mode="updates", durability="sync"):
            pass
        state = graph.get_state(config)
    if state.next or state.tasks:
        raise CampaignError(
            f"campaign {campaign_id} stopped before finishing; `kernelwright resume {campaign_id}`"
        )
    return campaign_summary(state.values, runs)
