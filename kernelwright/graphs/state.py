"""The graph state: small, serialisable, JSON-like plus declared pydantic models.

Sources, logs and results live in the run store, referenced by candidate id (a content hash).
"""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

from kernelwright.spec.plan import Decision, History, Plan, Profile, best_profile


class RunState(TypedDict, total=False):
    run_id: str
    task_path: str
    backend: str
    budget: int
    started: float
    plan: Plan | None
    round: int
    pending: list[str]  # candidate ids proposed for the current round
    round_sizes: Annotated[list[int], operator.add]
    profiles: Annotated[list[Profile], operator.add]
    decisions: Annotated[list[Decision], operator.add]
    status: str  # "running" | "done"
    confirmed: list[Profile]  # the top candidates re-measured before the best was named


class EvalRequest(TypedDict):
    """The payload each parallel evaluation branch receives through ``Send``."""

    run_id: str
    task_path: str
    candidate_id: str
    plan: Plan


def history_of(state: RunState) -> History:
    profiles = list(state.get("profiles") or [])
    decisions = state.get("decisions") or []
    return History(
        round=state.get("round", 0),
        budget=state["budget"],
        spent=len(profiles),
        profiles=profiles,
        round_sizes=list(state.get("round_sizes") or []),
        best=best_profile(_with_remeasured(profiles, state.get("confirmed") or []),
                          prefer_remeasured=False),
        last_decision=decisions[-1] if decisions else None,
    )


def _with_remeasured(profiles: list[Profile], confirmed: list[Profile]) -> list[Profile]:
    """``profiles`` with the re-measured figures in place of the first ones (a search resumed
    after a re-measurement, by a campaign's next slice or a chat rejection, compares its new
    candidates with the re-measured ones by their own times)."""
    again = {p.candidate_id: p for p in confirmed}
    return [again.get(p.candidate_id, p) for p in profiles]
