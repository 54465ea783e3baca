"""The graph state: small, serialisable, JSON-like plus declared pydantic models.

Sources, logs and results live in the run store, referenced by candidate id (a content hash).
"""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

from kernelwright.spec.plan import Decision, History, Plan, Profile, best_profile
from kernelwright.spec.reference import latest_reference


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
    challenged: Annotated[list[Profile], operator.add]  # re-measured during the search
    reference: Profile | None  # the reference itself as a candidate (spec/reference.py)


class EvalRequest(TypedDict):
    """The payload each parallel evaluation branch receives through ``Send``."""

    run_id: str
    task_path: str
    candidate_id: str
    plan: Plan


def history_of(state: RunState) -> History:
    """What the coder and critic see: every profile with its latest re-measured figures (a
    challenge during the search, or the final re-measurement) in place of the first ones."""
    again = [*(state.get("challenged") or []), *(state.get("confirmed") or [])]
    profiles = _with_remeasured(list(state.get("profiles") or []), again)
    decisions = state.get("decisions") or []
    return History(
        round=state.get("round", 0),
        budget=state["budget"],
        spent=len(profiles),
        profiles=profiles,
        round_sizes=list(state.get("round_sizes") or []),
        best=best_profile(profiles, prefer_remeasured=False),
        last_decision=decisions[-1] if decisions else None,
        reference=reference_of(state),
    )


def current_profiles(state: RunState) -> list[Profile]:
    """The run's profiles with the figures of challenges during the search in place of the
    first ones (the final re-measurement's ``confirmed`` profiles are kept apart)."""
    return _with_remeasured(list(state.get("profiles") or []),
                            list(state.get("challenged") or []))


def reference_of(state: RunState) -> Profile | None:
    """The reference's latest figures (re-measured ones when there are), or None."""
    return latest_reference(dict(state))


def _with_remeasured(profiles: list[Profile], again: list[Profile]) -> list[Profile]:
    """``profiles`` with the re-measured figures in place of the first ones (the latest
    re-measurement of each wins: a search resumed after a re-measurement, by a campaign's next
    slice or a chat rejection, compares its new candidates with those by their own times)."""
    latest = {p.candidate_id: p for p in again}
    return [latest.get(p.candidate_id, p) for p in profiles]
