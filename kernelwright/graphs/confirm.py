"""The honest winner: before a run names its best, its top candidates are measured again.

A first figure is one short interleaved timing, on a machine whose load moves; the highest of
many such ratios is biased upwards (a "2.90x" best re-measured at 0.76x and 1.43x). So when the
search stops, the ``confirm`` node:

1. takes the top ``settings.confirm_top`` correct candidates (ranked by their own medians, see
   ``spec.plan.ranking``);
2. evaluates each again in the run's warm task session (the same reference runner), the
   reference and the candidate interleaved round by round, with ``confirm_time_factor`` times
   the measuring time per side, and torch.compile of the reference timed beside them
   (``confirm_compile``);
3. puts every figure on one reference: the median of the reference medians of these
   re-measurements, ``ref``; a candidate's speedup is ``ref / its own median`` (its spread
   scaled the same way), so candidates are compared by their own times, never by the
   reference's moving between evaluations.

The re-measured profiles (``remeasured=True``) outrank first figures wherever a best is
chosen (``spec.plan.best_profile``); a candidate that fails its re-measurement (a wrong timed
output) is not offered.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Callable

from kernelwright.spec import Candidate, Task
from kernelwright.spec.plan import Plan, Profile, ranking
from kernelwright.spec.result import EvalResult

log = logging.getLogger(__name__)

Remeasure = Callable[[Task, Candidate], EvalResult]


def top_candidates(profiles: list[Profile], n: int) -> list[Profile]:
    """The ``n`` fastest correct profiles, one per candidate, fastest first."""
    correct = [p for p in profiles if p.correct and p.speedup is not None and not p.remeasured]
    unique = list({p.candidate_id: p for p in correct}.values())
    if not unique:
        return []
    return sorted(unique, key=ranking(unique), reverse=True)[: max(n, 0)]


def confirm(
    task: Task,
    plan: Plan,
    profiles: list[Profile],
    n: int,
    load: Callable[[str], Candidate],
    remeasure: Remeasure,
    profile: Callable[[Candidate, EvalResult, Plan], Profile],
) -> list[Profile]:
    """Re-measure the top ``n`` candidates of ``profiles``; their new, normalised profiles."""
    measured: list[tuple[Profile, EvalResult]] = []
    for first in top_candidates(profiles, n):
        candidate = load(first.candidate_id)
        result = remeasure(task, candidate)
        measured.append((profile(candidate, result, plan), result))
        log.info("re-measured %s: first %.2fx, now %s", first.candidate_id, first.speedup,
                 f"{result.timing.speedup:.2f}x" if result.timing else result.error)
    return normalise(measured)


def normalise(measured: list[tuple[Profile, EvalResult]]) -> list[Profile]:
    """Every re-measured speedup against one reference median (see the module doc)."""
    timed = [r.timing for _, r in measured if r.correct and r.timing is not None]
    if not timed:
        return [p.model_copy(update={"remeasured": True}) for p, _ in measured]
    ref_s = statistics.median(t.reference_median_s for t in timed)
    out = []
    for p, result in measured:
        t = result.timing
        if not result.correct or t is None:
            out.append(p.model_copy(update={"remeasured": True}))
            continue
        scale = ref_s / t.reference_median_s
        out.append(p.model_copy(update={
            "remeasured": True,
            "speedup": ref_s / t.candidate_median_s,
            "speedup_low": t.speedup_low * scale,
            "speedup_high": t.speedup_high * scale,
            "reference_ms": ref_s * 1e3,
            "candidate_ms": t.candidate_ms,
            "compile_ms": None if t.compile_ms is None else t.compile_ms * scale,
            "compile_recompiles": t.compile_recompiles,
        }))
    return out
