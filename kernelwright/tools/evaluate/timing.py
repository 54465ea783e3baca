"""The orchestrator's clock: interleaved batches of calls, timed per round trip.

Both runners are timed the same way: the orchestrator sends "run these N slots", starts its
clock, and stops it when ``done`` arrives; the runner made N calls on N different input sets
and copied every output into its slot before answering. While one side runs, the other side's
processes are stopped (``SIGSTOP``). Rounds alternate the order (reference first, then
candidate first).

Batch size: ``N = ceil(OVERHEAD_FACTOR * rtt / t_call)``, with ``rtt`` the round trip of an
empty batch and ``t_call`` the faster side's time per call, measured in warm-up rounds; so the
round trip is under ``1 / OVERHEAD_FACTOR`` (1 %) of a batch. ``N`` is at least ``MIN_BATCH``
and capped so that a batch stays under ``MAX_BATCH_S`` and the input slots fit
``MAX_SLOT_BYTES``.

Fresh inputs: ``N`` input sets are drawn by the reference runner (seeds never used by
verification); before every round each floating element gets its own random factor near 1
from the drawn values (:mod:`freshness`: unpredictable from the last round), and is copied
to the candidate's slots. Integer inputs keep their drawn values (they rotate over the N
sets). The candidate's processes are stopped from the first round to the last except while
its own batch runs: it does no work while a round is prepared and checked.

Checks: after each round, ``CHECKS_PER_ROUND`` slots picked with ``SystemRandom`` have the
candidate's outputs compared with the reference's of the same slot and its input slot compared
with the reference's; the candidate cannot know which, since every call is made the same way.

Per side, each round gives one time per call (batch time / N); rounds repeat until both sides
measured ``min_time_s`` (at least ``MIN_ROUNDS``), or the slow side ``SLOW_SIDE_FACTOR`` times
that; ``speedup = median(ref) / median(cand)``, bounded by the quartiles.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kernelwright.spec.result import Flag, Level, Timing
from kernelwright.tools.evaluate import _compare as cmp
from kernelwright.tools.evaluate import clocks, freshness
from kernelwright.tools.evaluate import verify as vf
from kernelwright.tools.evaluate.observers import Observer
from kernelwright.tools.evaluate.session import Arenas, make_arenas

if TYPE_CHECKING:
    from kernelwright.tools.evaluate.evaluation import CandidateEvaluation

TIMING_SEED_BASE = 1_000_003
OVERHEAD_FACTOR = 100.0
MAX_BATCH_S = 0.05
MAX_SLOTS = 256
MAX_SLOT_BYTES = 256 << 20
MIN_ROUNDS = 5
STATS_ROUNDS = 10
SLOW_SIDE_FACTOR = 5.0
CHECKS_PER_ROUND = 2
# calls per batch at least (within the caps): a round's checks and messages cost the same
# whatever its size, and with two calls a round the orchestrator checked every call of a
# 5 ms kernel, as long again as the calls themselves
MIN_BATCH = 4 * CHECKS_PER_ROUND
PROBE_SLOTS = 2


@dataclass
class TimingOutcome:
    timing: Timing | None = None
    problem: str | None = None
    flags: set[Flag] = field(default_factory=set)
    batch: int = 0


@dataclass
class Sides:
    """The timing arenas of both sides for one batch size."""

    ref: Arenas
    cand: Arenas

    @property
    def slots(self) -> int:
        return self.ref.inputs.slots


def time_candidate(ev: CandidateEvaluation, observers: Sequence[Observer]) -> TimingOutcome:
    """Warm up, choose the batch size, then time interleaved rounds (see the module doc)."""
    settings = ev.settings
    outcome = _time_candidate(ev, observers, settings)
    tampered = clocks.replaced()
    if tampered:  # measured with the saved clocks, but something is at work in this process
        return TimingOutcome(problem=f"the harness's clock was replaced ("
                             f"{', '.join(tampered)}); no timing is trusted",
                             flags={Flag.TIMER_TAMPERING})
    return outcome


def _time_candidate(ev: CandidateEvaluation, observers: Sequence[Observer],
                    settings) -> TimingOutcome:
    probe = _sides(ev, PROBE_SLOTS, filled=PROBE_SLOTS)
    for _ in range(max(1, settings.warmup_calls)):
        t_ref = _batch(ev, probe, "ref", list(range(PROBE_SLOTS))) / PROBE_SLOTS
        t_cand = _batch(ev, probe, "cand", list(range(PROBE_SLOTS))) / PROBE_SLOTS
    rtt = min(min(_batch(ev, probe, side, []) for side in ("ref", "cand")) for _ in range(3))
    n = batch_size(rtt, min(t_ref, t_cand), max(t_ref, t_cand),
                   probe.ref.inputs.slot_bytes)
    sides = probe if n <= PROBE_SLOTS else _sides(ev, n, filled=0)  # rounds refresh them all
    return _rounds(ev, sides, n, observers, settings)


def batch_size(rtt: float, fast: float, slow: float, slot_bytes: int) -> int:
    """Calls per batch: the round trip under 1 % of the faster side's batch, within caps."""
    want = max(MIN_BATCH, math.ceil(OVERHEAD_FACTOR * rtt / max(fast, 1e-9)))
    by_time = max(1, int(MAX_BATCH_S / max(slow, 1e-9)))
    by_memory = max(1, MAX_SLOT_BYTES // max(slot_bytes, 1))
    return max(1, min(want, by_time, by_memory, MAX_SLOTS))


def _sides(ev: CandidateEvaluation, slots: int, filled: int) -> Sides:
    """Timing arenas with at least ``slots`` input sets, mapped into both runners; the first
    ``filled`` hold the drawn values on both sides (every round's refresh rewrites all slots
    on both sides from the drawn values, so copying more would be undone)."""
    session = ev.session
    cached = session.timing.get("sides")
    if cached is None or cached.slots < slots:
        if cached is not None:
            cached.ref.close()
        ref = make_arenas(session.new_key(), session.contract.nominal, slots)
        session.ref_request(ref.message(), fds=ref.fds)
        session.ensure_model(0)
        for slot in range(slots):
            reply = session.ref_request({"op": "inputs", "key": ref.key, "slot": slot,
                                         "variant": session.contract.nominal.model_dump(
                                             mode="json"), "seed": TIMING_SEED_BASE + slot})
            ref.scalars.update(reply.get("scalars") or {})
        session.ref_request(ref.message(), fds=ref.fds)
        cached = Sides(ref, ref)  # the candidate half is made per candidate below
        session.timing["sides"] = cached
        session.timing["pristine"] = [[None if v is None else v.clone() for v in
                                       ref.inputs.views(k)] for k in range(slots)]
    for slot, values in enumerate(session.timing["pristine"][:filled]):  # undo the last
        for view, value in zip(cached.ref.inputs.views(slot), values, strict=True):  # refresh
            if view is not None:
                view.copy_(value)
    cand = session.candidate_arenas(("time",), session.contract.nominal, cached.slots,
                                    cached.ref.scalars)
    for slot in range(filled):
        for view, src in zip(cand.inputs.views(slot), cached.ref.inputs.views(slot),
                             strict=True):
            if view is not None:
                view.copy_(src)
    ev.map(cand)
    return Sides(cached.ref, cand)


def _batch(ev: CandidateEvaluation, sides: Sides, side: str, slots: list[int],
           observers: Sequence[Observer] = ()) -> float:
    """Run one batch on ``side`` with the other side frozen; return its wall time. Each side
    is left as frozen or running as it was found."""
    session, runner = ev.session, ev.runner
    ours, other = runner.channel, session.reference.channel
    key, send = sides.cand.key, ev.request
    if side == "ref":
        ours, other = other, ours
        key, send = sides.ref.key, session.ref_request
    message = {"op": "run", "key": key, "seed": 0, "slots": slots}
    for obs in observers:
        obs.before_start()
    ours_stopped, other_stopped = ours.stopped, other.stopped
    other.freeze()
    ours.thaw()
    try:
        start = clocks.perf_counter()
        reply = send(message)
        elapsed = clocks.perf_counter() - start
    finally:
        if ours_stopped:
            ours.freeze()
        if not other_stopped:
            other.thaw()
    for obs in observers:
        obs.after_finish()
    if side == "cand":
        ev.last_reply = reply
    return elapsed


def _refresh(sides: Sides, n: int, pristine: list, rng: random.Random) -> None:
    """New, unpredictable values in every input slot, copied to the candidate.

    Output slots are not poisoned here (a pass per round): a runner that skips writing a slot
    leaves last round's output there, computed from other inputs."""
    freshness.refresh([sides.ref.inputs.views(k) for k in range(n)],
                      [sides.cand.inputs.views(k) for k in range(n)], pristine[:n], rng)


@contextmanager
def _stopped(channel):
    """The candidate's processes stopped for the block (it does no work outside the clock)."""
    channel.freeze()
    try:
        yield
    finally:
        channel.thaw()


def _rounds(ev: CandidateEvaluation, sides: Sides, n: int, observers: Sequence[Observer],
            settings) -> TimingOutcome:
    rng = random.SystemRandom()
    ref_t: list[float] = []
    cand_t: list[float] = []
    slots = list(range(n))
    contract = ev.session.contract
    with _stopped(ev.runner.channel):  # running only for its own batches
        while len(ref_t) < settings.max_repeats and not _enough(ref_t, cand_t, n,
                                                                settings.min_time_s):
            _refresh(sides, n, ev.session.timing["pristine"], rng)
            order = ("ref", "cand") if len(ref_t) % 2 == 0 else ("cand", "ref")
            times = {side: _batch(ev, sides, side, slots, observers if side == "cand" else ())
                     for side in order}
            ref_t.append(times["ref"] / n)
            cand_t.append(times["cand"] / n)
            try:
                _check_round(ev, sides, rng.sample(slots, min(CHECKS_PER_ROUND, n)), contract)
            except vf.Rejected as rej:
                return TimingOutcome(problem=f"timed round {len(ref_t)}: {rej.error}",
                                     flags=rej.flags, batch=n)
    return TimingOutcome(timing=summarise(ref_t, cand_t), batch=n)


def _check_round(ev: CandidateEvaluation, sides: Sides, picked: list[int], contract) -> None:
    """Judge the batch's side effects, and the picked slots' outputs and inputs against the
    reference's; raise ``Rejected``."""
    vf.judge_effects(ev.last_reply, [], [], contract)
    for slot in picked:
        ref_out, cand_out = sides.ref.outputs.views(slot), sides.cand.outputs.views(slot)
        if all(cmp.all_close(c, r, *_tol(contract, r)) for c, r in zip(cand_out, ref_out,
                                                                      strict=True)):
            continue
        _, _, _, message = cmp.errors(cand_out, ref_out, contract)
        if message and not ev.session.as_accurate(sides.ref, slot, [cand_out], ref_out):
            raise vf.Rejected(Level.CORRECT, f"a timed call's output was wrong: {message}",
                              {Flag.TIMING_MISMATCH})

    for slot in picked:
        vf.judge_effects({}, sides.cand.inputs.views(slot), sides.ref.inputs.views(slot),
                         contract)


def _tol(contract, r) -> tuple[float, float]:
    tol = contract.tolerance_for(str(r.dtype))
    return tol.atol, tol.rtol


def _enough(ref_t: list[float], cand_t: list[float], n: int, min_time_s: float) -> bool:
    """Both sides measured ``min_time_s`` in all (``n`` calls a round); or, when one side is
    much slower, it measured ``SLOW_SIDE_FACTOR * min_time_s`` over ``STATS_ROUNDS`` rounds."""
    if len(ref_t) < MIN_ROUNDS:
        return False
    ref, cand = sum(ref_t) * n, sum(cand_t) * n
    return min(ref, cand) >= min_time_s or (
        len(ref_t) >= STATS_ROUNDS and max(ref, cand) >= SLOW_SIDE_FACTOR * min_time_s)


def summarise(ref_t: list[float], cand_t: list[float]) -> Timing:
    """Medians, IQRs and the speedup with its quartile bounds."""
    rq1, rmed, rq3 = _quartiles(ref_t)
    cq1, cmed, cq3 = _quartiles(cand_t)
    tiny = 1e-12
    return Timing(
        reference_median_s=rmed, reference_iqr_s=rq3 - rq1,
        candidate_median_s=cmed, candidate_iqr_s=cq3 - cq1, repeats=len(ref_t),
        speedup=rmed / max(cmed, tiny), speedup_low=rq1 / max(cq3, tiny),
        speedup_high=rq3 / max(cq1, tiny),
    )


def _quartiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) < 2:
        v = values[0]
        return v, v, v
    q1, med, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, med, q3


def spread(values: list[float]) -> float:
    """IQR / median of a list of times."""
    q1, med, q3 = _quartiles(values)
    return (q3 - q1) / med if med else math.inf


