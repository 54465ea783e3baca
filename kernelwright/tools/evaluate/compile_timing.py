"""torch.compile of the reference timed beside eager: same inputs, same clock, steady state.

After a candidate's timing (:mod:`timing`), when ``settings.time_compile`` is on:

1. the reference runner compiles its seed-0 model (once per task session; see
   :mod:`compile_side`) and makes warm-up calls on the timing inputs (compiling happens there,
   under ``compile_timeout_s``, never inside a timed batch);
2. rounds alternate an eager batch and a compiled batch on the same ``N`` input slots, each
   timed by the orchestrator's round trip with the candidate's processes stopped, the order
   flipping every round, until both sides measured ``min_time_s`` (at least ``MIN_ROUNDS``);
3. the compiled median is put on the candidate's scale: ``compile_median_s = compiled median
   x (the candidate timing's reference median / the eager median of these rounds)``, so
   ``Timing.speedup_vs_compile`` compares the candidate with torch.compile through the same
   reference, even if the machine's load moved between the two measurements.

Recompiles are dynamo's graphs compiled after the first warm-up call, reported as
``Timing.compile_recompiles`` (0 at a steady state). A model torch.compile cannot take leaves
the compile fields ``None`` and says why in ``ev.notes["torch_compile"]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kernelwright.spec.result import Timing
from kernelwright.tools.evaluate import clocks
from kernelwright.tools.evaluate.orchestrator import RunnerFailed
from kernelwright.tools.evaluate.timing import MIN_ROUNDS, _quartiles

if TYPE_CHECKING:
    from kernelwright.tools.evaluate.evaluation import CandidateEvaluation

WARMUP_CALLS = 3


def add_compile(ev: CandidateEvaluation, timing: Timing, n: int) -> Timing:
    """``timing`` with torch.compile's figures filled in (unchanged when it cannot compile)."""
    session = ev.session
    sides = session.timing.get("sides")
    if sides is None or n < 1:
        return timing
    settings = ev.settings
    key, mode = sides.ref.key, settings.compile_mode
    try:
        reply = session.reference.request(
            {"op": "compile", "seed": 0, "mode": mode, "key": key, "calls": WARMUP_CALLS},
            settings.compile_timeout_s, frozenset({"status"}))
    except RunnerFailed as exc:  # its late answer would break the next request: the pool
        session.reference.close()  # starts a fresh session for the next evaluation
        ev.notes["torch_compile"] = {"error": f"torch.compile did not finish: {exc} (raise "
                                              "KERNELWRIGHT_COMPILE_TIMEOUT_S)"}
        return timing
    if reply.get("type") == "error" or not reply.get("ok"):
        ev.notes["torch_compile"] = {"error": str(reply.get("error"))[:600]}
        return timing
    eager, compiled, recompiles = _rounds(ev, key, mode, list(range(n)))
    _, eager_med, _ = _quartiles(eager)
    q1, med, q3 = _quartiles(compiled)
    scale = timing.reference_median_s / eager_med if eager_med > 0 else 1.0
    ev.notes["torch_compile"] = {"mode": mode, "rounds": len(eager), "batch": n,
                                 "eager_median_s": eager_med, "compiled_median_s": med}
    return timing.model_copy(update={"compile_median_s": med * scale,
                                     "compile_iqr_s": (q3 - q1) * scale,
                                     "compile_recompiles": recompiles})


def _rounds(ev: CandidateEvaluation, key: str, mode: str,
            slots: list[int]) -> tuple[list[float], list[float], int]:
    settings, n = ev.settings, len(slots)
    eager: list[float] = []
    compiled: list[float] = []
    recompiles = 0
    while len(eager) < settings.max_repeats and not _enough(eager, compiled, n,
                                                            settings.min_time_s):
        order = (False, True) if len(eager) % 2 == 0 else (True, False)
        for is_compiled in order:
            elapsed, reply = _batch(ev, {"op": "run", "key": key, "seed": 0, "slots": slots,
                                         "compiled": is_compiled, "mode": mode})
            (compiled if is_compiled else eager).append(elapsed / n)
            if is_compiled:
                recompiles = int(reply.get("recompiles") or 0)
    return eager, compiled, recompiles


def _batch(ev: CandidateEvaluation, message: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    """One reference batch, timed by the round trip, with the candidate's processes stopped."""
    other = ev.runner.channel if ev.runner is not None else None
    if other is not None:
        other.freeze()
    try:
        start = clocks.perf_counter()
        reply = ev.session.ref_request(message)
        elapsed = clocks.perf_counter() - start
    finally:
        if other is not None:
            other.thaw()
    return elapsed, reply


def _enough(eager: list[float], compiled: list[float], n: int, min_time_s: float) -> bool:
    if len(eager) < MIN_ROUNDS:
        return False
    return min(sum(eager), sum(compiled)) * n >= min_time_s
