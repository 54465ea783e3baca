"""The tuning loop: ask, build a candidate, evaluate it, tell — until the budget is spent."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from kernelwright.errors import ConfigError, SpaceExhaustedError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from kernelwright.spec.candidate import Candidate
    from kernelwright.spec.result import EvalResult
    from kernelwright.tools.tune.base import Tuner
    from kernelwright.tools.tune.space import Scalar

logger = logging.getLogger(__name__)


def run_tuning(
    tuner: Tuner,
    evaluate: Callable[[Candidate], EvalResult],
    make_candidate: Callable[[Mapping[str, Scalar]], Candidate],
    budget: int,
) -> tuple[dict[str, Scalar], float] | None:
    """Spend up to ``budget`` evaluations (cache hits are free) and return ``tuner.best()``.

    Args:
        tuner: any ask/tell tuner.
        evaluate: the harness, ``evaluate(candidate) -> EvalResult``.
        make_candidate: turns a parameter set into a candidate (e.g. ``LoweredSource.candidate``);
            a ``ConfigError`` (a rule of the source rejects the combination) prunes the trial.
        budget: maximum number of evaluations.
    """
    while tuner.n_evaluations < budget and not tuner.exhausted:
        try:
            number, params = tuner.ask()
        except SpaceExhaustedError:
            break
        try:
            candidate = make_candidate(params)
        except ConfigError as e:  # a cross-parameter rule of the source (tile % reg != 0)
            logger.info("trial %d %s rejected: %s", number, params, e)
            tuner.reject(number)
            continue
        result = evaluate(candidate)
        record = tuner.tell(number, result)
        logger.info("trial %d %s -> %s %s", number, params, record.state, record.value)
    return tuner.best()
