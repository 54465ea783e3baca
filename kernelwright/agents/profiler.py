"""The profiler: turn a harness verdict into a Profile with a roofline position.

The role's protocol (:class:`Profiler`) and its offline policy (:class:`RooflineProfiler`); there
is no LLM profiler (the numbers come from the harness and the measured machine peaks).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from kernelwright.spec import Candidate
from kernelwright.spec.peaks import MachinePeaks
from kernelwright.spec.plan import Plan, Profile, Roofline, stats_as_dict
from kernelwright.spec.reference import REFERENCE_ORIGIN, REFERENCE_SPACE
from kernelwright.spec.result import EvalResult


@runtime_checkable
class Profiler(Protocol):
    """Turns a harness verdict into the evidence the critic and coder read."""

    def profile(self, candidate: Candidate, result: EvalResult, plan: Plan) -> Profile: ...


def roofline(plan: Plan, peaks: MachinePeaks, seconds: float | None) -> Roofline:
    """Roofline bound: ``t_min = max(bytes / BW, flops / peak)``; fraction = t_min / t."""
    return roofline_for(plan.flops, plan.min_bytes, peaks, seconds)


def roofline_for(
    flops: float, min_bytes: float, peaks: MachinePeaks, seconds: float | None
) -> Roofline:
    """:func:`roofline` of a kernel doing ``flops`` over ``min_bytes`` in ``seconds``."""
    mem_s = min_bytes / (peaks.bandwidth_gbps * 1e9)
    cmp_s = flops / (peaks.gflops * 1e9)
    bound_s = max(mem_s, cmp_s)
    if not seconds or seconds <= 0:
        return Roofline(bound="memory" if mem_s >= cmp_s else "compute", bound_time_s=bound_s)
    return Roofline(
        bound="memory" if mem_s >= cmp_s else "compute",
        bound_time_s=bound_s,
        achieved_gbps=min_bytes / seconds / 1e9,
        achieved_gflops=flops / seconds / 1e9,
        fraction=bound_s / seconds,
    )


class RooflineProfiler:
    """Offline profiler: harness verdict + build statistics + roofline against measured peaks.

    Example:
        >>> profiler = RooflineProfiler(peaks)  # doctest: +SKIP
        >>> profile = profiler.profile(candidate, result, plan)  # doctest: +SKIP
    """

    def __init__(self, peaks: MachinePeaks) -> None:
        self.peaks = peaks

    def profile(self, candidate: Candidate, result: EvalResult, plan: Plan) -> Profile:
        timing = result.timing if result.correct else None
        return Profile(
            candidate_id=candidate.id,
            correct=result.correct,
            level=int(result.level),
            speedup=timing.speedup if timing else None,
            speedup_low=timing.speedup_low if timing else None,
            speedup_high=timing.speedup_high if timing else None,
            flags=[f.value for f in result.flags],
            error=(result.error or "")[:2000] or None,
            roofline=roofline(plan, self.peaks, timing.candidate_median_s if timing else None),
            stats=stats_as_dict(result.stats),
            origin=candidate.origin,
            source=source_of(candidate.origin, plan),
            params=dict(candidate.params),
            stage="inner" if candidate.origin.startswith("tuner:") else "outer",
            reference_ms=timing.reference_ms if timing else None,
            candidate_ms=timing.candidate_ms if timing else None,
            compile_ms=timing.compile_ms if timing else None,
            compile_recompiles=timing.compile_recompiles if timing else None,
            space=REFERENCE_SPACE if candidate.origin == REFERENCE_ORIGIN else None,
        )

    def __repr__(self) -> str:
        peaks = self.peaks
        return f"RooflineProfiler({peaks.bandwidth_gbps:.1f} GB/s, {peaks.gflops:.0f} GFLOP/s)"


def source_of(origin: str, plan: Plan) -> str | None:
    """The plan source a candidate is a schedule point of: its origin (the offline coder's
    ``lowered``) or the tuner's ``tuner:<source>``, when the plan names that source."""
    name = origin.removeprefix("tuner:")
    return name if name in plan.sources else None
