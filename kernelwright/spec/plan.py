"""What the agents say to each other: the plan, the profile of a candidate, the critic's decision.

Small frozen pydantic models; the graph keeps them in its checkpointed state.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kernelwright.spec.opclass import ImplementationSpace, OperatorClass
from kernelwright.spec.result import KernelStats


class GroupSpace(BaseModel):
    """The implementation space one fusion group runs in, and why (measured when it could be
    either). ``timings_ms``: each option timed, e.g. ``{"custom_kernel": 1.9, "vendor_library
    (oneDNN post-ops)": 0.7}``; empty when only one space was legal."""

    model_config = ConfigDict(frozen=True)
    group: str  # "g0"
    kind: str  # gemm, conv, rows, pointwise, scan
    space: ImplementationSpace
    form: str = ""  # "our kernel", "oneDNN post-ops", "library call + our epilogue"
    why: str = ""
    timings_ms: dict[str, float] = Field(default_factory=dict)


class Plan(BaseModel):
    """The planner's choice (HIERA): what the task is, where to implement it, and how.

    ``sources`` names the parameterised programs the offline coder and the tuner move through,
    best first: ``["lowered"]`` (the lowering compiler's program and its schedule space) or
    ``[]`` when the reference does not lower (then only an LLM coder can write a kernel, and the
    rationale says why). Plans saved by older versions carry ``templates``/``op_spec`` fields;
    unknown fields are ignored on load.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")
    operator_class: OperatorClass
    implementation_space: ImplementationSpace
    backend: str
    strategy: str  # one line: what to try first
    rationale: str  # why, in a few sentences
    sources: list[str] = Field(default_factory=list)  # parameterised program sources, best first
    flops: float = 0.0  # the work the roofline bound counts (traced from the reference)
    min_bytes: int = 0
    groups: list[GroupSpace] = Field(default_factory=list)  # per fusion group: space and why
    own_kernel_share: float | None = None  # share of the planned program's time in our kernels

    def spaces_line(self) -> str:
        """One line: each group's space (and form), and the share of time in our kernels."""
        if not self.groups:
            return ""
        parts = [f"{g.group} {g.kind} {g.space.value}"
                 + (f" ({g.form})" if g.form and g.form != "our kernel" else "")
                 for g in self.groups]
        share = ("" if self.own_kernel_share is None
                 else f"; {self.own_kernel_share:.0%} of the time in our own kernels")
        return "spaces: " + ", ".join(parts) + share


class Roofline(BaseModel):
    """Where a kernel sits against this machine's measured peaks."""

    model_config = ConfigDict(frozen=True)
    bound: str  # "memory" or "compute": which roof limits this task
    bound_time_s: float  # the fastest time the roofline allows
    achieved_gbps: float | None = None
    achieved_gflops: float | None = None
    fraction: float | None = None  # bound_time / measured time, in (0, 1] when honest


class Profile(BaseModel):
    """The profiler's evidence about one candidate.

    ``origin`` is the candidate's (``lowered``, ``tuner:lowered``, ``llm``, ...); ``source`` is
    the plan source the candidate is a point of (``lowered`` for the offline coder's and the
    tuner's schedule points; ``None`` for a kernel the LLM wrote). Profiles saved by older
    versions carry ``template: "template:<name>"``, read as that source.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")
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
    origin: str = ""  # who wrote the candidate: "lowered", "tuner:lowered", "llm", ...
    source: str | None = None  # the plan source it is a schedule point of ("lowered")
    params: dict[str, Any] = Field(default_factory=dict)
    stage: str = "outer"  # R^3 level that proposed it: "outer" (sources) or "inner" (tuner)
    # The medians behind ``speedup`` (None in profiles saved before they were kept).
    reference_ms: float | None = None
    candidate_ms: float | None = None
    compile_ms: float | None = None  # torch.compile of the reference, same inputs and clock
    compile_recompiles: int | None = None
    remeasured: bool = False  # figures from the final re-measurement of the top candidates
    challenged: bool = False  # figures from a re-measurement during the search (a challenge)
    space: str | None = None  # "framework" for the reference itself (spec/reference.py)

    @model_validator(mode="before")
    @classmethod
    def _read_old_template_field(cls, data: Any) -> Any:
        """Older runs stored ``template: "template:<name>"``: read it as the source."""
        if isinstance(data, dict) and data.get("template") and "source" not in data:
            name = str(data["template"]).removeprefix("template:")
            data = {**data, "source": name, "origin": data.get("origin") or name}
        return data


class Action(StrEnum):
    """The critic's next step.

    ``switch_strategy`` asks for a different discrete choice: another plan source, the other
    implementation space, launch mode or row strategy of the lowered program's anchors and
    groups. Older runs said ``switch_template``; it reads as ``switch_strategy``.
    """

    VARY_PARAMS = "vary_params"
    SWITCH_STRATEGY = "switch_strategy"
    SWITCH_SPACE = "switch_space"
    SEARCH = "search"  # hand over to the search hook (tuner / archive)
    STOP = "stop"

    @classmethod
    def _missing_(cls, value: object) -> Action | None:
        return cls.SWITCH_STRATEGY if value == "switch_template" else None


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
    reference: Profile | None = None  # the reference itself as a candidate (spec/reference.py)


def best_profile(profiles: list[Profile], prefer_remeasured: bool = True) -> Profile | None:
    """The correct profile whose own time is the fastest (ties: the earliest).

    A candidate counts as better only when its own median improves, not when the reference's
    moved between evaluations: when every correct profile kept its medians they are ranked by
    ``candidate_ms`` (the same task, the same inputs), else by ``speedup``. Re-measured
    profiles (the final, interleaved re-measurement of the top candidates) outrank first
    figures: when any is re-measured, the best is chosen among those only (unless
    ``prefer_remeasured`` is false: a search still running compares all by their own times).
    The reference itself (``spec.reference``) is never the best kernel."""
    correct = [p for p in profiles if p.correct and p.speedup is not None
               and p.origin != "reference"]  # the best kernel: the reference is not one
    if prefer_remeasured and any(p.remeasured for p in correct):
        correct = [p for p in correct if p.remeasured]
    if not correct:
        return None
    return max(correct, key=ranking(correct))


def ranking(profiles: list[Profile]) -> Callable[[Profile], float]:
    """The key that orders correct ``profiles`` from slow to fast (see :func:`best_profile`)."""
    if all(p.candidate_ms for p in profiles):
        return lambda p: -(p.candidate_ms or 0.0)
    return lambda p: p.speedup or 0.0


def stats_as_dict(stats: dict[str, KernelStats]) -> dict[str, dict[str, int | None]]:
    return {name: s.model_dump() for name, s in stats.items()}
