"""The critic: accept or reject a round's candidates and decide the next step, with a reason.

The role's protocol (:class:`Critic`), its offline policies (:class:`RuleCritic`,
:class:`HierarchyCritic` for the R^3 hierarchy) and its LLM policy (:class:`LLMCritic`, whose
decisions the offline critic's hard stops always override).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from kernelwright.agents.attempts import (
    attempt_of,
    attempt_window,
    parent_feedback,
    shown_block,
)
from kernelwright.agents.llm import LLMClient
from kernelwright.agents.prompting import (
    SourceLookup,
    advice_for,
    chat_messages,
    lookup_source,
    plan_text,
    profile_summary,
)
from kernelwright.errors import LLMBudgetError
from kernelwright.prompts import render
from kernelwright.spec.plan import Action, Decision, History, Plan, Profile, ranking


@runtime_checkable
class Critic(Protocol):
    """Decides after each round: keep going how, or stop, and why."""

    def decide(self, plan: Plan, history: History, elapsed_s: float) -> Decision: ...


ROOFLINE_STOP = 0.9  # stop when the best reaches this fraction of its roofline bound
# Above this the measured peaks are wrong (measured under load): the fraction proves nothing.
ROOFLINE_TRUSTED = 1.05


class RuleCritic:
    """Offline critic: explicit rules, each decision with a one-line reason.

    Rules, first match wins: budget or time spent -> stop; best at >= 90 % of its roofline
    bound -> stop (not above 105 %: that means the machine's peaks were measured low, so the
    fraction proves nothing); ``max_idle_rounds`` rounds in a row proposed nothing new -> stop
    (a single idle round -> ask for another strategy, then the tuner; an idle round counts as a
    round without improvement; a plan with no source says why in the stop reason); the round
    improved the best -> vary parameters around it; ``patience`` rounds without improvement ->
    switch strategy while a plan source is untried, else hand over to the search hook; a round
    with no correct candidate -> switch strategy; otherwise vary parameters.

    Example:
        >>> RuleCritic(patience=2)
        RuleCritic(patience=2)
    """

    def __init__(
        self, patience: int = 2, time_limit_s: float | None = None, max_idle_rounds: int = 3
    ) -> None:
        self.patience = patience
        self.time_limit_s = time_limit_s
        self.max_idle_rounds = max_idle_rounds

    def decide(self, plan: Plan, history: History, elapsed_s: float) -> Decision:
        round_profiles = _last_round(history)
        accepted = [p.candidate_id for p in round_profiles if p.correct]
        suspicious = [p.candidate_id for p in round_profiles if "suspicious_speedup" in p.flags]
        action, reason = self._next(plan, history, elapsed_s, round_profiles)
        return Decision(action=action, reason=reason, accepted=accepted, suspicious=suspicious)

    def _next(self, plan: Plan, history: History, elapsed_s: float, last: list[Profile]):
        best = history.best
        if history.spent >= history.budget:
            return Action.STOP, f"budget spent ({history.spent}/{history.budget} evaluations)"
        if self.time_limit_s is not None and elapsed_s >= self.time_limit_s:
            return (
                Action.STOP,
                f"time limit reached ({elapsed_s:.0f}s >= {self.time_limit_s:.0f}s)",
            )
        fraction = best.roofline.fraction if best and best.roofline else None
        if fraction is not None and ROOFLINE_STOP <= fraction <= ROOFLINE_TRUSTED:
            return Action.STOP, f"best reaches {fraction:.0%} of its roofline bound"
        idle = _idle_rounds(history)
        if idle >= self.max_idle_rounds:
            why = f"no new candidate proposed for {idle} rounds in a row"
            if not plan.sources:  # nothing offline to propose from: say what the plan said
                why += f" (the plan has no source: {plan.strategy})"
            return Action.STOP, why
        if idle:
            # Nothing new this round: ask for another strategy, then the tuner.
            action = Action.SWITCH_STRATEGY if idle % 2 else Action.SEARCH
            return action, (
                f"the round proposed nothing new ({idle}/{self.max_idle_rounds} idle rounds)"
            )
        if best is not None and best.candidate_id in {p.candidate_id for p in last}:
            return Action.VARY_PARAMS, f"new best {best.speedup:.2f}x: vary its parameters"
        stale = _rounds_without_improvement(history)
        if stale >= self.patience:
            tried = {p.source for p in history.profiles if p.source}
            if len(tried) < len(plan.sources):
                return Action.SWITCH_STRATEGY, f"no improvement for {stale} rounds: next source"
            return Action.SEARCH, f"no improvement for {stale} rounds and every source tried"
        if last and not any(p.correct for p in last):
            return Action.SWITCH_STRATEGY, "no candidate of the round was correct"
        return Action.VARY_PARAMS, "keep exploring around the best"

    def __repr__(self) -> str:
        return f"RuleCritic(patience={self.patience})"


class HierarchyCritic(RuleCritic):
    """The critic of the R^3 hierarchy: decides when to move between the outer level (new
    sources: the plan's sources, parents from the archive) and the inner level (the tuner on the
    most promising source's schedule space), and says why.

    The inner level gets ``inner_share`` of the budget. It starts once every plan source has a
    measurement (or the outer level stalls) and ends when its share is spent or it stalls
    for ``patience`` rounds.

    Example:
        >>> HierarchyCritic(inner_share=0.5)
        HierarchyCritic(patience=2, inner_share=0.5)
    """

    def __init__(
        self,
        patience: int = 2,
        time_limit_s: float | None = None,
        inner_share: float = 0.5,
        max_idle_rounds: int = 3,
    ) -> None:
        super().__init__(patience, time_limit_s, max_idle_rounds)
        self.inner_share = inner_share

    def _next(self, plan: Plan, history: History, elapsed_s: float, last: list[Profile]):
        action, reason = super()._next(plan, history, elapsed_s, last)
        best = history.best
        if action == Action.STOP or best is None or not best.source:
            return action, reason
        inner_budget = round(history.budget * self.inner_share)
        inner_spent = sum(p.stage == "inner" for p in history.profiles)
        in_inner = (
            history.last_decision is not None and history.last_decision.action == Action.SEARCH
        )
        if inner_spent >= inner_budget:
            if in_inner:
                return Action.VARY_PARAMS, (
                    f"inner level spent its share ({inner_spent}/"
                    f"{inner_budget}): back to source variation"
                )
            return (Action.VARY_PARAMS if action == Action.SEARCH else action), reason
        stale = _rounds_without_improvement(history)
        if in_inner and stale >= self.patience:
            return Action.SWITCH_STRATEGY, (
                f"inner tuning of {best.source} stalled for "
                f"{stale} rounds: back to the outer level"
            )
        if in_inner:
            return Action.SEARCH, f"inner: keep tuning {best.source} (best {best.speedup:.2f}x)"
        tried = {p.source for p in history.profiles if p.source}
        if len(tried) >= len(plan.sources) or action == Action.SEARCH:
            return Action.SEARCH, (
                f"promising source {best.source} at {best.speedup:.2f}x: "
                "tune its parameters (inner level)"
            )
        return action, reason

    def __repr__(self) -> str:
        return f"HierarchyCritic(patience={self.patience}, inner_share={self.inner_share})"


def _last_round(history: History) -> list[Profile]:
    """The profiles of the latest round ([] for a round that proposed nothing)."""
    n = history.round_sizes[-1] if history.round_sizes else len(history.profiles)
    return history.profiles[len(history.profiles) - n :] if n else []


def _idle_rounds(history: History) -> int:
    """How many rounds in a row, up to the latest, proposed nothing new."""
    idle = 0
    for size in reversed(history.round_sizes):
        if size:
            break
        idle += 1
    return idle


def _rounds_without_improvement(history: History) -> int:
    """Rounds in a row, up to the latest, whose best did not beat the run's best so far, by
    the candidates' own times where kept (see ``spec.plan.ranking``), not by a ratio that a
    moving reference median can inflate."""
    correct = [p for p in history.profiles if p.correct and p.speedup is not None]
    key = ranking(correct) if correct else (lambda p: 0.0)
    best_so_far, stale, start = None, 0, 0
    for size in history.round_sizes:
        scores = [key(p) for p in history.profiles[start : start + size]
                  if p.correct and p.speedup is not None]
        round_best = max(scores, default=None)
        improved = round_best is not None and (best_so_far is None or round_best > best_so_far)
        stale = 0 if improved else stale + 1
        if improved:
            best_so_far = round_best
        start += size
    return stale


class CritiqueReply(BaseModel):
    """The critic's answer (a tool call named ``CritiqueReply``)."""

    decision: Action = Field(description="what the team does next")
    diagnosis: str = Field(description="what limits the candidate now, with evidence")
    next_steps: list[str] = Field(default_factory=list, description="changes for the coder")
    confidence: float = Field(0.5, ge=0.0, le=1.0)


class LLMCritic:
    """Decides the next step with the LLM; the offline critic's hard stops always win.

    The LLM budget and the rule's hard stops (budget, time, roofline, no new candidates) come
    first; then the LLM picks the action and says why; a dropped reply falls back to the rule.
    """

    def __init__(
        self,
        client: LLMClient,
        fallback: Critic,
        sources: SourceLookup | None = None,
        context: Callable[[], tuple[str | None, str | None]] | None = None,
        machine: str | None = None,
        can_search: Callable[[History], bool] | None = None,
    ) -> None:
        self.client = client
        self.fallback = fallback
        self.lookup = sources
        self.context = context  # () -> (contract text, reference source) of the run's task
        self.machine = machine
        self.can_search = can_search  # does the tuner have a point to propose?

    def __repr__(self) -> str:
        return f"LLMCritic({self.client!r}, fallback={self.fallback!r})"

    def decide(self, plan: Plan, history: History, elapsed_s: float) -> Decision:
        rule = self.fallback.decide(plan, history, elapsed_s)
        if (why := self.client.over_budget()) is not None:
            return rule.model_copy(update={"action": Action.STOP, "reason": why})
        if rule.action == Action.STOP:
            return rule
        try:
            messages = chat_messages("the critic", self._prompt(plan, history))
            reply = self.client.ask_structured(
                "critic", messages, CritiqueReply, salvage=critique_from_prose
            )
        except LLMBudgetError as exc:
            return rule.model_copy(update={"action": Action.STOP, "reason": str(exc)})
        if reply is None:
            return rule
        steps = "; ".join(reply.next_steps[:3])
        reason = " ".join(reply.diagnosis.split()) + (f" Next: {steps}" if steps else "")
        action, overruled = self._checked(reply.decision, rule, history)
        if overruled:
            reason = f"{overruled} {reason}"
        return rule.model_copy(update={"action": action, "reason": reason})

    def _checked(self, wanted: Action, rule: Decision, history: History) -> tuple[Action, str]:
        """The LLM's decision unless the evidence says otherwise (then the rule's, and why)."""
        if wanted == Action.STOP:  # the rule did not stop: its conditions do not hold
            return rule.action, (
                f"(LLM asked to stop; refused: {history.budget - history.spent} evaluations "
                "left, the best is not near its roofline bound and new candidates still come: "
                f"{rule.action.value} instead.)"
            )
        if wanted == Action.SEARCH and self.can_search is not None and not self.can_search(
            history
        ):
            fallback = Action.VARY_PARAMS if rule.action == Action.SEARCH else rule.action
            return fallback, (
                f"(LLM asked for search; the tuner has no point left to propose: "
                f"{fallback.value} instead.)"
            )
        return wanted, ""

    def _prompt(self, plan: Plan, history: History) -> str:
        contract, reference = self.context() if self.context is not None else (None, None)
        best = history.best
        best_cand = lookup_source(self.lookup, best.candidate_id) if best else None
        ids = {p.candidate_id for p in _last_round(history)}
        return render(
            "critic.j2",
            contract=contract,
            reference_source=reference,
            plan=plan_text(plan),
            machine=self.machine,
            round=[attempt_of(p, self.lookup) for p in _last_round(history)],
            best_source=shown_block(best_cand.source) if best_cand else None,
            best_summary=profile_summary(best),
            feedback=parent_feedback(best) if best else None,
            history=[a for a in attempt_window(history, self.lookup, 8)
                     if a.candidate_id not in ids],
            budget_left=history.budget - history.spent,
            advice=advice_for(plan, 3),
            tool_name=CritiqueReply.__name__,
            decisions=[a.value for a in Action],
        )


_ACTION_WORDS = {
    action: re.compile(r"\b" + action.value.replace("_", r"[\s_-]+") + r"\b", re.IGNORECASE)
    for action in Action
}


def critique_from_prose(text: str) -> CritiqueReply | None:
    """Read a prose critic reply (no tool call, no JSON) when it names exactly one action.

    A chatty model often answers "I'd vary the parameters ... Decision: vary_params"; the action
    named (``vary_params``, ``vary params``, ``switch-strategy`` ...) becomes the decision and
    the prose, whitespace collapsed and cut at 400 characters, the diagnosis. Replies naming no
    action or several different ones are not guessed at.

    Example:
        >>> critique_from_prose("Tiles look too small. Decision: vary params.").decision.value
        'vary_params'
        >>> critique_from_prose("Either stop or search.") is None
        True
    """
    named = {action for action, pattern in _ACTION_WORDS.items() if pattern.search(text)}
    if len(named) != 1:
        return None
    diagnosis = " ".join(text.split())[:400] or "(no diagnosis given)"
    return CritiqueReply(decision=named.pop(), diagnosis=diagnosis, confidence=0.3)
