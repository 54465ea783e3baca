"""The tuner contract: ask for parameters, tell the evaluation's result, read the best.

Every tuner (Optuna, grid, random) sees only ``EvalResult``s: the objective is the speedup of
a correct result (maximised). An incorrect result fails the trial (or scores the worst value,
``0``, with ``incorrect="worst"``); a syntax or build failure prunes it as infeasible.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from kernelwright.spec.result import Level

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kernelwright.spec.result import EvalResult
    from kernelwright.tools.tune.space import Scalar, SearchSpace

WORST_VALUE = 0.0  # a speedup no real candidate scores
INVALID = "invalid_params"  # outcome of a parameter set the source's rules reject



class TrialState(StrEnum):
    """Outcome of one trial (mirrors Optuna's states we use)."""

    COMPLETE = "complete"
    FAIL = "fail"
    PRUNED = "pruned"
    RUNNING = "running"
    WAITING = "waiting"


@dataclass(frozen=True)
class TrialRecord:
    """One asked and (maybe) told trial."""

    number: int
    params: dict[str, Scalar]
    state: TrialState
    value: float | None = None
    attrs: dict[str, object] = field(default_factory=dict)

    @property
    def evaluated(self) -> bool:
        """True when an evaluation produced it (not a duplicate, not a crashed stale trial)."""
        told = self.state in (TrialState.COMPLETE, TrialState.FAIL, TrialState.PRUNED)
        fresh = "duplicate_of" not in self.attrs and self.attrs.get("outcome") != INVALID
        return told and "outcome" in self.attrs and fresh


def score(result: EvalResult, incorrect: str = "fail") -> tuple[TrialState, float | None]:
    """Map a verdict to a trial outcome.

    Returns:
        ``(COMPLETE, speedup)`` for a correct timed result; ``(PRUNED, None)`` for a syntax or
        build failure; otherwise ``(FAIL, None)``, or ``(COMPLETE, 0.0)`` if
        ``incorrect == "worst"``.
    """
    if result.level <= Level.BUILD_FAILED:
        return TrialState.PRUNED, None
    if result.correct and result.speedup is not None:
        return TrialState.COMPLETE, float(result.speedup)
    if incorrect == "worst":
        return TrialState.COMPLETE, WORST_VALUE
    return TrialState.FAIL, None


def should_prune(first_time_s: float, best_time_s: float | None, factor: float = 3.0) -> bool:
    """Early-stop policy: drop a trial whose first timed repeat is ``factor``× the best so far."""
    return best_time_s is not None and first_time_s > factor * best_time_s


def params_key(params: Mapping[str, Scalar]) -> str:
    """A stable identity for a parameter set (sorted JSON)."""
    return json.dumps(dict(params), sort_keys=True)


class Tuner(ABC):
    """Ask/tell search over a :class:`SearchSpace`; subclasses own how proposals are made.

    ``ask`` returns ``(trial_number, params)``; the caller builds a candidate from ``params``,
    evaluates it and calls ``tell(trial_number, result)``. Proposals from a planner or LLM go
    in with ``enqueue`` and are asked before the tuner's own.
    """

    def __init__(self, space: SearchSpace, incorrect: str = "fail") -> None:
        if incorrect not in ("fail", "worst"):
            raise ValueError(f"incorrect={incorrect!r}: use 'fail' or 'worst'")
        self.space = space
        self.incorrect = incorrect

    @abstractmethod
    def ask(self) -> tuple[int, dict[str, Scalar]]:
        """Next trial number and parameters to evaluate."""

    @abstractmethod
    def enqueue(self, params: Mapping[str, Scalar]) -> None:
        """Propose ``params`` (validated against the space) ahead of the tuner's own picks."""

    @abstractmethod
    def trials(self) -> list[TrialRecord]:
        """Every trial so far, in number order."""

    @abstractmethod
    def _finish(self, number: int, state: TrialState, value: float | None, attrs: dict) -> None:
        """Record the outcome of trial ``number``; ``attrs`` holds at least ``outcome``."""

    def tell(self, number: int, result: EvalResult) -> TrialRecord:
        """Record the evaluation of trial ``number`` and return the resulting record."""
        state, value = score(result, self.incorrect)
        attrs: dict[str, object] = {"outcome": result.level.name.lower()}
        if result.correct and result.timing is not None:
            attrs["candidate_s"] = result.timing.candidate_median_s
        self._finish(number, state, value, attrs)
        return self.trials_by_number()[number]

    def tell_value(self, number: int, value: float | None, state: TrialState) -> None:
        """Record an outcome directly (recorded tables, tests): speedup or None."""
        self._finish(number, state, value, {"outcome": state.value})

    def prune(self, number: int) -> None:
        """Stop trial ``number`` early, e.g. when ``should_prune(first, self.best_time_s)``."""
        self._finish(number, TrialState.PRUNED, None, {"outcome": "early_stop"})

    def reject(self, number: int) -> None:
        """Drop trial ``number`` whose parameters the source refuses; costs no evaluation."""
        self._finish(number, TrialState.PRUNED, None, {"outcome": INVALID})

    def trials_by_number(self) -> dict[int, TrialRecord]:
        return {t.number: t for t in self.trials()}

    def best(self) -> tuple[dict[str, Scalar], float] | None:
        """Parameters and speedup of the best completed trial, or None."""
        done = [t for t in self.trials() if t.state is TrialState.COMPLETE and t.value is not None]
        top = max(done, key=lambda t: t.value, default=None)  # type: ignore[arg-type,return-value]
        return (dict(top.params), float(top.value)) if top else None  # type: ignore[arg-type]

    @property
    def best_time_s(self) -> float | None:
        """Fastest median time of a correct candidate so far (for :func:`should_prune`)."""
        times = [t.attrs["candidate_s"] for t in self.trials() if "candidate_s" in t.attrs]
        return min(times, default=None)  # type: ignore[type-var]

    @property
    def exhausted(self) -> bool:
        """True when every point of a finite space has been tried (a loop should stop)."""
        return False

    @property
    def n_evaluations(self) -> int:
        """How many evaluations were spent (duplicates answered from cache do not count)."""
        return sum(t.evaluated for t in self.trials())
