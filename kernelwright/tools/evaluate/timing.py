"""Interleaved timing of reference and candidate in one process, on fresh inputs every call.

Each round takes an input set with values never used before (made before the clock
starts), calls reference and candidate on it in alternating order, synchronises every loaded
backend before stopping the clock, and afterwards checks the candidate's output against the
reference's of the same round.
Rounds repeat until both sides have accumulated ``min_time_s`` (at least 3 rounds, at most
``max_repeats``); when one side is far slower, until it has spent 5x that over >= 10 rounds.
``speedup = median(ref) / median(cand)``, bounded by the quartiles.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch

from kernelwright.spec import Contract, ShapeVariant, variant_inputs
from kernelwright.spec.result import Timing
from kernelwright.tools.evaluate import _compare as cmp
from kernelwright.tools.evaluate.observers import Observer

TIMING_SEED_BASE = 1_000_003
POOL_SIZE = 8
REUSES = 4
PERTURB = 1.0 + 2.0**-10
MIN_ROUNDS = 3
STATS_ROUNDS = 10
SLOW_SIDE_FACTOR = 5.0


@dataclass
class TimingOutcome:
    timing: Timing
    mismatches: int
    first_mismatch: str | None = None


def input_stream(task: ModuleType, variant: ShapeVariant, start: int,
                 draw: Callable[[int], list[Any]] | None = None) -> Iterator[list[Any]]:
    """Input sets whose values never repeat, made outside any clock.

    ``draw(seed)`` makes one fresh set (default: :func:`variant_inputs` of ``variant``); it
    must return new tensors, since the stream perturbs them in place.

    A pool of ``POOL_SIZE`` sets is drawn from fresh seeds and cycled ``REUSES`` times; before
    each reuse every floating tensor is scaled in place by ``1 + 2**-10`` (one cheap pass
    instead of a new random draw; values change by at most 0.3 % in all). Same pointers with
    new values: a cache keyed on pointers returns stale outputs (caught by the per-round
    check), one keyed on values never hits. Sets with non-floating tensors are never reused.
    """
    draw = draw or (lambda s: variant_inputs(task, variant, s))
    seed = start
    while True:
        pool = [draw(seed + k) for k in range(POOL_SIZE)]
        seed += POOL_SIZE
        reuses = REUSES if all(_floating(x) for inputs in pool for x in inputs) else 1
        for use in range(reuses):
            for inputs in pool:
                if use:
                    for x in inputs:
                        if isinstance(x, torch.Tensor):
                            x.mul_(PERTURB)
                yield inputs


def _floating(x: Any) -> bool:
    return not isinstance(x, torch.Tensor) or x.is_floating_point()


@dataclass
class Timer:
    """The timing loop; ``clock`` is the harness's, captured before any candidate import."""

    clock: Callable[[], float]
    sync: Callable[[], None]
    observers: Sequence[Observer] = ()

    def call(self, model: Any, inputs: list[Any], observe: bool) -> tuple[float, Any]:
        for obs in self.observers if observe else ():
            obs.before_start()
        start = self.clock()
        out = model(*inputs)
        self.sync()
        elapsed = self.clock() - start
        for obs in self.observers if observe else ():
            obs.after_finish()
        return elapsed, out

    def run(self, reference: Any, candidate: Any, inputs: Iterator[list[Any]],
            contract: Contract, *, warmup: int, min_time_s: float,
            max_repeats: int) -> TimingOutcome:
        """Warm up, then time alternating rounds and check each round's outputs."""
        with torch.no_grad():
            for _ in range(warmup):
                args = next(inputs)
                self.call(reference, args, False)
                self.call(candidate, args, False)
            return self._rounds(reference, candidate, inputs, contract, min_time_s, max_repeats)

    def _rounds(self, reference, candidate, inputs, contract, min_time_s, max_repeats):
        ref_t: list[float] = []
        cand_t: list[float] = []
        mismatches, first = 0, None
        while len(ref_t) < max_repeats and not _enough(ref_t, cand_t, min_time_s):
            args = next(inputs)
            if len(ref_t) % 2 == 0:
                rt, ref_out = self.call(reference, args, False)
                ct, cand_out = self.call(candidate, args, True)
            else:
                ct, cand_out = self.call(candidate, args, True)
                rt, ref_out = self.call(reference, args, False)
            ref_t.append(rt)
            cand_t.append(ct)
            problem = _mismatch(cand_out, ref_out, contract)
            if problem:
                mismatches += 1
                first = first or f"timed call {len(ref_t)}: {problem}"
        return TimingOutcome(summarise(ref_t, cand_t), mismatches, first)


def _enough(ref_t: list[float], cand_t: list[float], min_time_s: float) -> bool:
    """Both sides measured ``min_time_s``; or, when one side is much slower, it measured
    ``SLOW_SIDE_FACTOR * min_time_s`` over at least ``STATS_ROUNDS`` rounds."""
    if len(ref_t) < MIN_ROUNDS:
        return False
    ref, cand = sum(ref_t), sum(cand_t)
    if min(ref, cand) >= min_time_s:
        return True
    return len(ref_t) >= STATS_ROUNDS and max(ref, cand) >= SLOW_SIDE_FACTOR * min_time_s


def _mismatch(cand_out: Any, ref_out: Any, contract: Contract) -> str | None:
    try:
        cand = cmp.as_outputs(cand_out)
        ref = cmp.as_outputs(ref_out)
        cmp.check_shapes(cand, ref)
    except Exception as exc:
        return str(exc)
    for c, r in zip(cand, ref, strict=True):  # cheap check first; statistics only on failure
        tol = contract.tolerance_for(str(r.dtype))
        if not cmp.all_close(c, r, tol.atol, tol.rtol):
            return cmp.errors(cand, ref, contract)[3]
    return None


def summarise(ref_t: list[float], cand_t: list[float]) -> Timing:
    """Medians, IQRs and the speedup with its quartile bounds."""
    rq1, rmed, rq3 = _quartiles(ref_t)
    cq1, cmed, cq3 = _quartiles(cand_t)
    tiny = 1e-12
    return Timing(
        reference_median_s=rmed,
        reference_iqr_s=rq3 - rq1,
        candidate_median_s=cmed,
        candidate_iqr_s=cq3 - cq1,
        repeats=len(ref_t),
        speedup=rmed / max(cmed, tiny),
        speedup_low=rq1 / max(cq3, tiny),
        speedup_high=rq3 / max(cq1, tiny),
    )


def _quartiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) < 2:
        v = values[0]
        return v, v, v
    q1, med, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, med, q3
