"""Which task of a campaign gets the next slice of evaluations: sliding-window UCB.

Each task is an arm. Pulling an arm runs a slice of ``n`` evaluations on that task; its reward
is the improvement of the task's best speedup, in doublings, per evaluation:

    g = clip(log2(best_after / best_before), 0, n),       reward per evaluation = g / n  in [0, 1]

where a task with no correct kernel yet stands at the reference itself (``best_before`` = 1.0:
what the user has without kernelwright), so a first kernel gains only what it beats the
reference by, and a slice that finds nothing correct gains nothing. After the first kernel, any
improvement counts, also below 1.0x (0.3x -> 0.6x is one doubling).

Improvement rates change over a campaign (a task improves quickly, then stalls), so the policy is
the sliding-window UCB of Garivier & Moulines (2011, "On upper-confidence bound policies for
switching bandit problems"), with time measured in evaluations. Over the pulls of the last ``W``
evaluations (campaign-wide), with ``N_a`` the evaluations arm ``a`` received in the window and
``G_a`` its summed gains:

    score(a) = G_a / N_a + c * sqrt(ln(min(T, W)) / N_a),       score(a) = +inf if N_a = 0

``T`` is the number of evaluations so far. The next slice goes to the highest score (ties: the
arm with the fewest evaluations overall, then the first listed). A stalled task's mean falls to
zero, so improving tasks win; once the stalled task's pulls leave the window it is tried again
(a campaign never gives up on a task for good while it has budget).

The policy is a pure function of the pull history, so a campaign resumed after a crash makes
the same choice it would have made.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

REFERENCE = 1.0  # where a task without a correct kernel stands


@dataclass(frozen=True)
class Pull:
    """One slice: ``evals`` evaluations on ``arm`` that gained ``gain`` doublings of speedup."""

    arm: str
    evals: int
    gain: float


def slice_gain(best_before: float | None, best_after: float | None, evals: int) -> float:
    """Doublings of best speedup a slice gained, clipped to ``[0, evals]``."""
    if not best_after:
        return 0.0
    before = best_before or REFERENCE
    return min(max(math.log2(best_after / before), 0.0), float(max(evals, 0)))


class SlidingWindowUCB:
    """Sliding-window UCB over improvement per evaluation (see the module docstring).

    Example:
        >>> ucb = SlidingWindowUCB(window=20, c=0.25)
        >>> ucb.choose(["a", "b"], [Pull("a", 2, 1.0)])
        'b'
        >>> ucb.choose(["a", "b"], [Pull("a", 2, 1.0), Pull("b", 2, 0.0)])
        'a'
    """

    def __init__(self, window: int = 24, c: float = 0.25) -> None:
        if window < 1 or c < 0:
            raise ValueError("SlidingWindowUCB needs window >= 1 and c >= 0")
        self.window = window
        self.c = c

    def __repr__(self) -> str:
        return f"SlidingWindowUCB(window={self.window}, c={self.c})"

    def scores(self, arms: Sequence[str], history: Sequence[Pull]) -> dict[str, float]:
        """Each arm's score from the pulls inside the window."""
        total = sum(p.evals for p in history)
        evals = dict.fromkeys(arms, 0)
        gains = dict.fromkeys(arms, 0.0)
        seen = 0
        for pull in reversed(history):
            if seen >= self.window:
                break
            seen += pull.evals
            if pull.arm in evals:
                evals[pull.arm] += pull.evals
                gains[pull.arm] += pull.gain
        horizon = math.log(max(min(total, self.window), 2))
        return {
            arm: math.inf
            if evals[arm] == 0
            else gains[arm] / evals[arm] + self.c * math.sqrt(horizon / evals[arm])
            for arm in arms
        }

    def choose(self, arms: Sequence[str], history: Sequence[Pull]) -> str:
        """The arm to pull next (``arms`` must not be empty)."""
        if not arms:
            raise ValueError("no arm to choose from")
        scores = self.scores(arms, history)
        spent = {arm: sum(p.evals for p in history if p.arm == arm) for arm in arms}
        order = {arm: i for i, arm in enumerate(arms)}
        return max(arms, key=lambda a: (scores[a], -spent[a], -order[a]))
