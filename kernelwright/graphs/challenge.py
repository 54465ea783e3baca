"""The search decides on re-measured figures: a would-be new best is challenged first.

After each round, if the round's fastest correct kernel would replace the incumbent best (its
own median is lower), the two of them and the reference itself (when it was measured) are
measured again in ``settings.challenge_rounds`` short interleaved rounds in the warm session
(``graphs.confirm.measure_rounds``). Those figures (``challenged=True``) then stand in for the
first ones in what the search sees (``graphs.state.history_of``): the best, the critic's "new
best", the archive's elites and the tuner's parent. A first figure that was a lucky moment
therefore never becomes the best on its own.

Cost: at most ``challenge_rounds * 3`` extra evaluations per round that found a would-be new
best, none otherwise; they are not counted in the search budget.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from kernelwright.spec import Candidate
from kernelwright.spec.plan import Profile, best_profile

log = logging.getLogger(__name__)

Measure = Callable[[list[Candidate]], list[Profile]]


def challengers(profiles: list[Profile], size: int) -> tuple[Profile, Profile] | None:
    """(challenger, incumbent) when the last ``size`` profiles hold a would-be new best."""
    if size <= 0 or size > len(profiles):
        return None
    old, new = profiles[: len(profiles) - size], profiles[len(profiles) - size :]
    incumbent = best_profile(old, prefer_remeasured=False)
    challenger = best_profile(new, prefer_remeasured=False)
    if challenger is None or incumbent is None:
        return None  # nothing to decide between
    if best_profile([incumbent, challenger], prefer_remeasured=False) is not challenger:
        return None  # ties keep the incumbent
    return challenger, incumbent


def challenge(
    profiles: list[Profile],
    size: int,
    reference: Profile | None,
    load: Callable[[str], Candidate],
    measure: Measure,
) -> list[Profile]:
    """Re-measure a would-be new best beside the incumbent (and the reference); their
    ``challenged`` profiles, or [] when the round holds no would-be new best."""
    pair = challengers(profiles, size)
    if pair is None:
        return []
    ids = [p.candidate_id for p in pair]
    if reference is not None and reference.correct:
        ids.append(reference.candidate_id)
    again = measure([load(cid) for cid in ids])
    out = [p.model_copy(update={"challenged": True}) for p in again]
    challenger, incumbent = pair
    by_id = {p.candidate_id: p for p in out}
    log.info("challenge: %s first %.3f ms, again %s ms; incumbent %s again %s ms",
             challenger.candidate_id, challenger.candidate_ms or 0.0,
             by_id[challenger.candidate_id].candidate_ms, incumbent.candidate_id,
             by_id[incumbent.candidate_id].candidate_ms)
    return out
