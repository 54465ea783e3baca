"""What the agents say to each other: the plan, the profile of a candidate, the critic's decision.

Small frozen pydantic models; the graph keeps them in its checkpointed state.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kernelwright.spec.contract import ImplementationSpace
from kernelwright.spec.opclass import OperatorClass
from kernelwright.spec.result import KernelStats


class Plan(BaseModel):
    """The planner's choice (HIERA): what the task is, where to implement it, and how."""

    model_config = ConfigDict(frozen=True)
    operator_class: OperatorClass
    implementation_space: ImplementationSpace
    backend: str
    strategy: str  # one line: what to try first
    rationale: str  # why, in a few sentences
    templates: list[str] = Field(default_factory=list)  # template names to try, best first
    op_spec: dict[str, Any] = Field(default_factory=dict)  # what the templates must compute
    flops: float = 0.0
    min_bytes: int = 0


class Roofline(BaseModel):
    """Where a kernel sits against this machine's measured peaks."""

    model_config = ConfigDict(frozen=True)
    bound: str  # "memory" or "compute": which roof limits this task
    bound_time_s: float  # the fastest time the roofline allows
    achieved_gbps: float | None = None
    achieved_gflops: float | None = None
    fraction: float | None = None  # bound_time / measured time, in (0, 1] when honest


class Profile(BaseModel):
    """The profiler's evidence about one candidate."""

    model_config = ConfigDict(frozen=True)
    candidate_id: str
    correct: bool
    level: int
    speedup: float | None = None
    speedup_low: float | None = None
    speedup_high: float | None = None
    flags: list[str] = Field(default_factory=list)
    error: str | None = None
    roofline: Roofline | None = None
    stats: dict[str, dict[str, int | None]] = Field(default_factory=dict)
    template: str | None = None  # "template:<name>" when rendered from a kernel template
    params: dict[str, Any] = Field(default_factory=dict)
    stage: str = "outer"  # R^3 level that proposed it: "outer" (sources) or "inner" (tuner)


class Action(StrEnum):
    VARY_PARAMS = "vary_params"
    SWITCH_TEMPLATE = "switch_template"
    SWITCH_SPACE = "switch_space"
    SEARCH = "search"  # hand over to the search hook (tuner / archive)
    STOP = "stop"


class Decision(BaseModel):
    """The critic's verdict on a round and the next step, with a one-line reason."""

    model_config = ConfigDict(frozen=True)
    action: Action
    reason: str
    accepted: list[str] = Field(default_factory=list)  # candidate ids accepted this round
    suspicious: list[str] = Field(default_factory=list)


class History(BaseModel):
    """What the coder and critic see of the run so far."""

    model_config = ConfigDict(frozen=True)
    round: int
    budget: int
    spent: int
    profiles: list[Profile]
    round_sizes: list[int] = Field(default_factory=list)  # profiles per round, in order
    best: Profile | None = None
    parent: Profile | None = None  # the outer level's chosen parent (else the coder uses best)
    last_decision: Decision | None = None


def best_profile(profiles: list[Profile]) -> Profile | None:
    """The correct profile with the highest speedup (ties: the earliest)."""
    correct = [p for p in profiles if p.correct and p.speedup is not None]
    return max(correct, key=lambda p: p.speedup or 0.0) if correct else None


def stats_as_dict(stats: dict[str, KernelStats]) -> dict[str, dict[str, int | None]]:
    return {name: s.model_dump() for name, s in stats.items()}
