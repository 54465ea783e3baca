"""Run one slice of a campaign: drive one task's optimisation run up to a target budget.

Each task of a campaign is an ordinary optimisation run (its own thread in the same checkpoint
database, its own run directory), grown slice by slice: a slice raises the run's budget to
``target`` and drives the optimize graph until its critic stops. The run's state keeps every
profile, so the next slice continues where the last one ended.

Idempotent, so a campaign killed in the middle of a slice loses nothing when it runs the slice
again: a run with no checkpoint starts with budget ``target``; an unfinished run continues from
its checkpoint (its budget was already raised: the input step is checkpointed first,
``durability="sync"``); a finished run below ``target`` gets the new budget as input and runs
on. Evaluations are cached by candidate hash, so none runs twice.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from kernelwright.config import Settings
from kernelwright.errors import CampaignError
from kernelwright.graphs.drive import drive, initial_state, snapshot, step_limit
from kernelwright.graphs.runner import finish_report
from kernelwright.graphs.state import current_profiles
from kernelwright.graphs.store import RunStore, open_checkpointer
from kernelwright.graphs.teams import offline_team
from kernelwright.spec import Task
from kernelwright.spec.plan import best_profile
from kernelwright.spec.reference import answer_of, chosen_label, latest_reference


@dataclass(frozen=True)
class SliceOutcome:
    """Where a task's run stands after a slice."""

    spent: int  # evaluations of the run so far
    best: float | None  # best correct speedup so far
    best_low: float | None
    best_high: float | None
    stopped_early: bool  # the critic stopped below the target (no ideas left, roofline reached)
    tokens: int  # LLM tokens the run used so far
    cost: float | None  # LLM cost so far, USD (None: a model without a price)
    # Which the run chose: "kernel", "reference" (the reference itself beat every kernel:
    # keep PyTorch) or "none"; ``best`` stays the best kernel's speedup (fast_p counts kernels).
    chosen: str = "none"


class SliceRunner:
    """Keeps up to ``max_open`` task teams (warm workers) open across slices.

    Example:
        >>> with SliceRunner(settings, RunStore(root)) as runner:  # doctest: +SKIP
        ...     runner.run("campaign-x--l1_gelu", "tasks/l1_gelu.py", target=4, meta={})
    """

    def __init__(
        self,
        settings: Settings,
        runs: RunStore,
        context_factory=offline_team,
        max_open: int = 3,
    ) -> None:
        self.settings = settings
        self.runs = runs
        self.context_factory = context_factory
        self.max_open = max_open
        self.saver = open_checkpointer(runs.root)
        self._open: OrderedDict[str, tuple[contextlib.ExitStack, Any]] = OrderedDict()
        self._busy: set[str] = set()  # runs whose slice is under way (parallel slices)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SliceRunner({self.runs!r}, open={list(self._open)})"

    def __enter__(self) -> SliceRunner:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        while self._open:
            _, (stack, _) = self._open.popitem(last=False)
            stack.close()

    def run(
        self, run_id: str, task_path: str, target: int, meta: dict[str, Any], observer=None,
        deadline: float | None = None,
    ) -> SliceOutcome:  # fmt: skip
        """Drive run ``run_id`` until its critic stops with budget ``target`` (or, inside the
        slice, at ``deadline``: epoch seconds, the campaign's time limit).

        A fresh context: the run's graph must not see the campaign graph's run context (it
        would otherwise be taken for a subgraph of the campaign's thread).
        """
        with self._lock:
            if run_id in self._busy:
                raise CampaignError(f"run {run_id} already has a slice under way")
            self._busy.add(run_id)
        try:
            return contextvars.Context().run(
                self._run, run_id, task_path, target, meta, observer, deadline
            )
        finally:
            with self._lock:
                self._busy.discard(run_id)

    def _run(self, run_id, task_path, target, meta, observer, deadline=None) -> SliceOutcome:
        if run_id not in self.runs.run_ids():
            task = Task.from_path(task_path)
            self.runs.create_run(run_id, {**meta, "task": task.name, "task_path": str(task.path),
                                          "backend": self.settings.backend, "budget": target,
                                          "status": "created"})  # fmt: skip
        ctx = self._context(run_id)
        self._limit(run_id, deadline)
        limit = step_limit(self.settings, target)
        snap = snapshot("optimize", self.saver, run_id)
        if snap is None:
            start = initial_state(run_id, self.runs.meta(run_id), budget=target)
            snap = drive("optimize", ctx, self.saver, run_id, start, limit=limit,
                         observer=observer)  # fmt: skip
        elif snap.next or snap.tasks:
            snap = drive("optimize", ctx, self.saver, run_id, None, limit=limit,
                         observer=observer)  # fmt: skip
        values = snap.values
        if values.get("budget", 0) < target:
            snap = drive("optimize", ctx, self.saver, run_id, {"budget": target}, limit=limit,
                         observer=observer)  # fmt: skip
            values = snap.values
        self.runs.update_meta(run_id, budget=target)
        finish_report(self.runs, run_id, values, self.settings)
        return self._outcome(run_id, values, target)

    def _limit(self, run_id: str, deadline: float | None) -> None:
        """Give the run's critic the campaign's deadline as its time limit (the critic counts
        from the run's start), so a slice stops at the deadline, not after its last round."""
        critic = self._open[run_id][1].critic
        limit = None if deadline is None else deadline - self.runs.meta(run_id)["started"]
        for rule in (critic, getattr(critic, "fallback", None)):
            if rule is not None and hasattr(rule, "time_limit_s"):
                rule.time_limit_s = limit

    def _context(self, run_id: str) -> Any:
        """The run's team (kept open: warm workers), opening it if needed; the least recently
        used idle team is closed to stay within ``max_open``."""
        with self._lock:
            if run_id in self._open:
                self._open.move_to_end(run_id)
                return self._open[run_id][1]
            idle = [r for r in self._open if r not in self._busy]
            closing = [self._open.pop(r) for r in idle[: max(0, len(self._open) + 1 -
                                                                 self.max_open)]]
        for stack, _ in closing:
            stack.close()
        stack = contextlib.ExitStack()
        ctx = stack.enter_context(self.context_factory(self.settings, self.runs, run_id))
        with self._lock:
            self._open[run_id] = (stack, ctx)
        return ctx

    def _outcome(self, run_id: str, values: dict[str, Any], target: int) -> SliceOutcome:
        profiles = list(values.get("profiles") or [])
        best = best_profile([*current_profiles(values), *(values.get("confirmed") or [])])
        chosen = chosen_label(answer_of(best, latest_reference(values)))
        tokens, cost = run_usage(self.runs, run_id)
        return SliceOutcome(
            spent=len(profiles),
            best=best.speedup if best else None,
            best_low=best.speedup_low if best else None,
            best_high=best.speedup_high if best else None,
            stopped_early=len(profiles) < target and not _timed_out(values),
            tokens=tokens,
            cost=cost,
            chosen=chosen,
        )


def _timed_out(values: dict[str, Any]) -> bool:
    """The run's critic stopped it on the time limit (it has ideas left: not exhausted)."""
    decisions = values.get("decisions") or []
    return bool(decisions) and decisions[-1].reason.startswith("time limit reached")


def run_usage(runs: RunStore, run_id: str) -> tuple[int, float | None]:
    """(tokens, USD) the run's LLM agents used, from its persisted usage ledger (0 offline)."""
    saved = runs.load_usage(run_id)
    if saved is None:
        return 0, 0.0
    agents = json.loads(saved).get("per_agent", {}).values()
    tokens = sum(int(a.get("input_tokens", 0)) + int(a.get("output_tokens", 0)) for a in agents)
    costs = [a.get("cost_usd", 0.0) for a in agents]
    return tokens, None if None in costs else float(sum(costs))
