"""The worker's state and one evaluation, run inside the sandboxed worker process.

The session is created before any candidate is imported: that is when the harness's clock
and the thread baseline are captured.
"""

from __future__ import annotations

import gc
import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from kernelwright.config import Settings
from kernelwright.spec import Contract, import_task_module, variant_inputs
from kernelwright.spec.result import Flag, Level
from kernelwright.tools.evaluate._compare import clone_inputs
from kernelwright.tools.evaluate._loader import Rejected, forget, import_candidate, kernel_stats
from kernelwright.tools.evaluate.guards import (
    ClockGuard,
    ThreadGuard,
    begin_candidate,
    emulated_backends,
    synchronizer,
)
from kernelwright.tools.evaluate.observers import load_observer
from kernelwright.tools.evaluate.replay import RECHECK_SEED, Replay
from kernelwright.tools.evaluate.sandbox import limit_cpu_for_call
from kernelwright.tools.evaluate.timing import TIMING_SEED_BASE, Timer, input_stream
from kernelwright.tools.evaluate.verify import Verdict, Verifier

log = logging.getLogger(__name__)

Emit = Callable[[dict[str, Any]], None]
MIN_SEEDS = 3  # "correct" always means at least three seeds per variant
TIMED_CACHE_BYTES = 256 << 20  # timed input sets a worker keeps for its next candidates
RESTART_FLAGS = {Flag.TIMER_TAMPERING, Flag.THREAD_INJECTION}


class WorkerSession:
    """One task's worker state: the task module, its contract, the guards."""

    def __init__(self, task_path: str, contract: dict[str, Any]) -> None:
        self.clocks = ClockGuard()
        self.threads = ThreadGuard()
        self.task = import_task_module(Path(task_path))
        self.contract = Contract.model_validate(contract)
        self.workdir = Path(tempfile.mkdtemp(prefix="kw_worker_"))
        self.device = _cpu_name()
        self.replays: dict[tuple[int, str], Replay | None] = {}  # None: could not record
        self.timed_inputs: dict[int, list[Any]] = {}  # pristine timed inputs, by seed
        self.timed_bytes = 0

    def evaluate(self, request: dict[str, Any], emit: Emit) -> dict[str, Any]:
        """Run the ladder, then timing if correct; returns the result fields as a dict."""
        settings = Settings(**request["settings"])
        limit_cpu_for_call(4 * settings.call_timeout_s * (os.cpu_count() or 1))
        if settings.worker_threads:
            torch.set_num_threads(settings.worker_threads)
        verdict, timing, observations = Verdict(), None, {}
        module = None
        try:
            replay, replay_info = self._replay(settings, emit)
            emit({"phase": "build"})
            begin_candidate()
            module = import_candidate(request["source"], self.workdir, request["id"])
            verifier = self._verifier(settings, replay)
            self._tamper_check(verdict)
            models = verifier.models(module.ModelNew, 0)
            self._tamper_check(verdict)
            if not verdict.flags:
                emit({"phase": "verify"})
                verdict = self._verify(verifier, module.ModelNew, verdict)
            if verdict.ok and emulated_backends():
                verdict.flags.add(Flag.EMULATED)  # a verdict only: emulated time means nothing
            elif verdict.ok:
                emit({"phase": "time"})
                timing, observations = self._time(verifier, module.ModelNew, settings,
                                                  request.get("observers", []), verdict)
            stats = kernel_stats(module, models.candidate)
        except Rejected as rej:
            verdict.reject(rej.level, rej.error, rej.flags)
            stats = {}
        finally:
            if module is not None:
                forget(module)
        if settings.record_replay:
            observations = {**observations, "replay": replay_info}
        return self._result(verdict, timing, stats, observations)

    def _replay(self, settings: Settings, emit: Emit) -> tuple[Replay | None, dict[str, Any]]:
        """The task's recording for these settings: held, loaded, or recorded now (before
        this worker's first candidate is imported, normally)."""
        if not settings.record_replay:
            return None, {}
        seeds = max(settings.seeds, MIN_SEEDS)
        root = settings.data_dir / "recordings"
        key = (seeds, str(root))
        if key in self.replays:
            held = self.replays[key]
            return held, {"source": "memory" if held else "live", "key": held and held.key}
        emit({"phase": "replay"})
        try:
            held = Replay.obtain(self.task, self.contract, seeds, root)
        except Exception as exc:  # e.g. the reference fails on a seed: verify live, as before
            log.warning("cannot record the reference of %s (%s); verifying live",
                        self.contract.task_name, exc)
            self.replays[key] = None
            return None, {"source": "live", "error": str(exc)[:500]}
        self.replays[key] = held
        return held, {"source": held.source, "key": held.key, "path": str(held.path)}

    def _verifier(self, settings: Settings, replay: Replay | None) -> Verifier:
        seeds = max(settings.seeds, MIN_SEEDS)
        return Verifier(self.task, self.contract, seeds, synchronizer(), self.threads, replay)

    def _verify(self, verifier: Verifier, cls: type, prior: Verdict) -> Verdict:
        verifier.sync = synchronizer()  # backends the constructor loaded
        verdict = verifier.run(cls)
        verdict.flags |= prior.flags
        self._tamper_check(verdict)
        return verdict

    def _tamper_check(self, verdict: Verdict) -> None:
        bad = self.clocks.tampered()
        if bad:
            verdict.reject(Level.CORRECT, f"replaced the harness's timing functions: "
                           f"{', '.join(bad)}; leave time and sync functions alone",
                           {Flag.TIMER_TAMPERING})

    def _time(self, verifier: Verifier, cls: type, settings: Settings, observer_paths,
              verdict: Verdict):
        observers = [load_observer(p) for p in observer_paths]
        models = verifier.models(cls, 0)
        timer = Timer(self.clocks.clock, verifier.sync, observers)
        draw = self._timed_draw if settings.record_replay else None
        stream = input_stream(self.task, self.contract.nominal, TIMING_SEED_BASE, draw)
        outcome = timer.run(models.reference, models.candidate, stream, self.contract,
                            warmup=settings.warmup_calls, min_time_s=settings.min_time_s,
                            max_repeats=settings.max_repeats)
        if outcome.mismatches:
            verdict.reject(Level.CORRECT, f"{outcome.mismatches} timed call(s) gave wrong "
                           f"outputs; first: {outcome.first_mismatch}", {Flag.TIMING_MISMATCH})
        if outcome.timing.speedup > settings.suspicious_speedup:
            verdict.flags.add(Flag.SUSPICIOUS_SPEEDUP)
            self._recheck(verifier, cls, verdict)
        threads = self.threads.injected()
        if threads:
            verdict.reject(Level.CORRECT, f"left Python threads running: {', '.join(threads)}",
                           {Flag.THREAD_INJECTION})
        self._tamper_check(verdict)
        return outcome.timing, {p: o.results() for p, o in zip(observer_paths, observers,
                                                                 strict=True)}

    def _timed_draw(self, seed: int) -> list[Any]:
        """Timed inputs of ``seed``: drawn once per worker and cloned for every candidate (a
        clone is ~10x cheaper than a random draw), up to ``TIMED_CACHE_BYTES`` of them."""
        held = self.timed_inputs.get(seed)
        if held is None:
            held = variant_inputs(self.task, self.contract.nominal, seed)
            size = sum(x.nbytes for x in held if isinstance(x, torch.Tensor))
            if size + self.timed_bytes > TIMED_CACHE_BYTES:
                return held
            self.timed_inputs[seed], self.timed_bytes = held, self.timed_bytes + size
        return clone_inputs(held)

    def _recheck(self, verifier: Verifier, cls: type, verdict: Verdict) -> None:
        """Re-verify a suspiciously fast candidate on never-seen inputs."""
        try:
            verifier.check(cls, self.contract.nominal, RECHECK_SEED, verdict, False)
        except Rejected as rej:
            verdict.reject(rej.level, f"re-verification after a suspicious speedup: "
                           f"{rej.error}", rej.flags)

    def _result(self, verdict: Verdict, timing, stats, observations) -> dict[str, Any]:
        gc.collect(1)  # the young generations hold the candidate; a full pass costs ~0.5 s
        restart = bool(verdict.flags & RESTART_FLAGS) or bool(self.threads.injected())
        return {
            "level": int(verdict.level),
            "error": verdict.error,
            "variants": [v.model_dump(mode="json") for v in verdict.variants],
            "timing": timing.model_dump(mode="json") if timing else None,
            "flags": sorted(f.value for f in verdict.flags),
            "stats": {k: v.model_dump(mode="json") for k, v in stats.items()},
            "device": self.device,
            "observations": observations,
            "restart": restart,
        }


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return "cpu: " + line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "cpu"


def memory_status() -> dict[str, int]:
    """This process's peak address space and peak resident set, in MiB."""
    out: dict[str, int] = {}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                key = line.split(":")[0]
                if key in ("VmPeak", "VmHWM"):
                    out[key] = int(line.split()[1]) // 1024
    except OSError:
        pass
    return out
