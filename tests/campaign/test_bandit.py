"""Sliding-window UCB: the policy the campaign uses to share evaluations between tasks."""

from __future__ import annotations

import math

import pytest

from kernelwright.graphs.bandit import Pull, SlidingWindowUCB, slice_gain


def test_gain_is_doublings_of_the_best_clipped_to_the_slice():
    assert slice_gain(1.0, 2.0, 2) == pytest.approx(1.0)
    assert slice_gain(2.0, 1.5, 2) == 0.0  # a worse slice never has negative gain
    assert slice_gain(None, 0.8, 2) == 0.0  # a first kernel slower than the reference
    assert slice_gain(None, 1.5, 2) == pytest.approx(math.log2(1.5))  # beats the reference
    assert slice_gain(0.3, 0.6, 2) == pytest.approx(1.0)  # below 1x, progress still counts
    assert slice_gain(None, 100.0, 1) == 1.0  # at most one doubling per evaluation
    assert slice_gain(None, None, 2) == 0.0 and slice_gain(2.0, None, 2) == 0.0


def test_untried_arms_first_then_the_improving_one():
    ucb = SlidingWindowUCB(window=40, c=0.25)
    history = [Pull("a", 2, 1.0), Pull("b", 2, 0.0)]
    assert ucb.choose(["a", "b", "c"], history) == "c"
    history.append(Pull("c", 2, 0.0))
    picks = []
    for _ in range(6):
        arm = ucb.choose(["a", "b", "c"], history)
        picks.append(arm)
        history.append(Pull(arm, 2, 0.8 if arm == "a" else 0.0))
    assert picks.count("a") >= 4, picks  # the improving task gets most of the budget


def test_a_stalled_arm_is_tried_again_once_its_pulls_leave_the_window():
    ucb = SlidingWindowUCB(window=6, c=0.25)
    history = [Pull("b", 2, 0.0)] + [Pull("a", 2, 0.5)] * 3
    assert ucb.scores(["a", "b"], history)["b"] == math.inf  # b's pull left the window
    assert ucb.choose(["a", "b"], history) == "b"


def test_choice_is_a_pure_function_of_the_history():
    ucb = SlidingWindowUCB()
    history = [Pull("a", 2, 0.3), Pull("b", 2, 0.1), Pull("a", 1, 0.0)]
    assert {ucb.choose(["a", "b"], history) for _ in range(5)} == {"a"}
    with pytest.raises(ValueError):
        ucb.choose([], history)
