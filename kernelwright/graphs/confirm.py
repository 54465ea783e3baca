"""The honest winner: before a run names its best, its top candidates are measured again.

A first figure is one short interleaved timing, on a machine whose load moves; the highest of
many such ratios is biased upwards (a "2.90x" best re-measured at 0.76x and 1.43x). So:

- when the search stops, the ``confirm`` node takes the top ``settings.confirm_top`` correct
  kernels (ranked by their own medians, see ``spec.plan.ranking``) and the reference itself
  (``spec.reference``, when the task allows the framework space) and measures them again in the
  run's warm task session, in ``confirm_rounds`` interleaved rounds (A, B, C, ref, A, B, C, ref,
  ...), so a load change hits all of them alike; torch.compile of the reference is timed beside
  them (``confirm_compile``);
- during the search, a candidate that would become the new best is first *challenged*: it, the
  incumbent and the reference are measured in ``challenge_rounds`` short interleaved rounds,
  and the search decides on those figures (``OptimizeNodes.critic``).

Every figure of one re-measurement is put on one reference: the median of all its reference
medians, ``ref``; a candidate's median is the median of its own medians over the rounds and its
speedup ``ref / that`` (its spread scaled the same way), so candidates are compared by their own
times, never by the reference's moving between evaluations.

The final profiles (``remeasured=True``) outrank first figures wherever a best is chosen
(``spec.plan.best_profile``); a candidate that fails any round (a wrong timed output) is not
offered.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Callable

from kernelwright.spec import Candidate, Task
from kernelwright.spec.plan import Plan, Profile, ranking
from kernelwright.spec.reference import kernels
from kernelwright.spec.result import EvalResult

log = logging.getLogger(__name__)

Remeasure = Callable[[Task, Candidate], EvalResult]


def top_candidates(profiles: list[Profile], n: int) -> list[Profile]:
    """The ``n`` fastest correct profiles, one per candidate, fastest first."""
    correct = [p for p in kernels(profiles)
               if p.correct and p.speedup is not None and not p.remeasured]
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
    reference: Candidate | None = None,
    rounds: int = 1,
) -> list[Profile]:
    """Re-measure the top ``n`` candidates of ``profiles`` (and ``reference``) in ``rounds``
    interleaved rounds; their new, normalised profiles."""
    tops = top_candidates(profiles, n)
    candidates = [load(first.candidate_id) for first in tops]
    if reference is not None and candidates:
        candidates.append(reference)
    out = [p.model_copy(update={"remeasured": True})
           for p in measure_rounds(task, plan, candidates, rounds, remeasure, profile)]
    for first in tops:
        again = next(p for p in out if p.candidate_id == first.candidate_id)
        log.info("re-measured %s: first %.2fx, now %s", first.candidate_id, first.speedup,
                 f"{again.speedup:.2f}x" if again.correct else again.error)
    return out


def measure_rounds(
    task: Task,
    plan: Plan,
    candidates: list[Candidate],
    rounds: int,
    remeasure: Remeasure,
    profile: Callable[[Candidate, EvalResult, Plan], Profile],
) -> list[Profile]:
    """Each of ``candidates`` measured once per round, round after round (A, B, ref, A, B,
    ref, ...); one profile per candidate, on one reference median (see the module doc). A
    candidate wrong in one round is not measured again and keeps that failing result."""
    results: dict[str, list[EvalResult]] = {c.id: [] for c in candidates}
    failed: set[str] = set()
    for _ in range(max(rounds, 1)):
        for candidate in candidates:
            if candidate.id in failed:
                continue
            result = remeasure(task, candidate)
            results[candidate.id].append(result)
            if not result.correct or result.timing is None:
                failed.add(candidate.id)
    timed = [r.timing for rs in results.values() for r in rs
             if r.correct and r.timing is not None]
    ref_s = statistics.median(t.reference_median_s for t in timed) if timed else None
    out = []
    for candidate in candidates:
        mine = results[candidate.id]
        first = profile(candidate, mine[-1], plan)
        if candidate.id in failed or ref_s is None:
            out.append(first)
            continue
        out.append(first.model_copy(update=_combined([r.timing for r in mine], ref_s)))
    return out


def _combined(timings: list, ref_s: float) -> dict:
    """One candidate's figures over its rounds, against the common reference ``ref_s``."""
    own_s = statistics.median(t.candidate_median_s for t in timings)
    rel = [(t.speedup_low / t.speedup, t.speedup_high / t.speedup) for t in timings if t.speedup]
    compiled = [t.compile_median_s * ref_s / t.reference_median_s for t in timings
                if t.compile_median_s is not None]
    speedup = ref_s / own_s
    return {
        "speedup": speedup,
        "speedup_low": speedup * min((lo for lo, _ in rel), default=1.0),
        "speedup_high": speedup * max((hi for _, hi in rel), default=1.0),
        "reference_ms": ref_s * 1e3,
        "candidate_ms": own_s * 1e3,
        "compile_ms": statistics.median(compiled) * 1e3 if compiled else None,
        "compile_recompiles": max((t.compile_recompiles for t in timings
                                   if t.compile_recompiles is not None), default=None),
    }
