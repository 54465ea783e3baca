"""One candidate's walk through the orchestrator: spawn, verify, time, judge, clean up.

1. The fork server forks a fresh runner; it imports the candidate (build errors surface here).
2. For every shape variant and seed: the model is built under the seed with the reference's
   weights; a batch of two calls on copies of the recorded inputs; the outputs are judged
   here (:mod:`verify`).
3. If correct: interleaved timing (:mod:`timing`), with randomly chosen timed calls checked.
4. The runner's whole process tree is killed and its scratch directory removed, whatever
   happened; a runner that broke the protocol gets ``Flag.PROTOCOL_VIOLATION``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from kernelwright.spec import Candidate
from kernelwright.spec.result import EvalResult, Flag, KernelStats, Level, Timing, VariantCheck
from kernelwright.tools.cpuinfo import cpu_model
from kernelwright.tools.evaluate import cgroups, freshness, protocol, sandbox
from kernelwright.tools.evaluate import verify as vf
from kernelwright.tools.evaluate.build_options import check_builds
from kernelwright.tools.evaluate.compile_timing import add_compile
from kernelwright.tools.evaluate.observers import Observer
from kernelwright.tools.evaluate.orchestrator import CandidateRunner, ForkServer, RunnerFailed
from kernelwright.tools.evaluate.session import RECHECK_SEED, Arenas, TaskSession
from kernelwright.tools.evaluate.timing import TimingOutcome, time_candidate
from kernelwright.tools.evaluate.watchdog import TreeWatchdog


class CandidateEvaluation:
    """The state of one candidate's evaluation (its runner and its arenas)."""

    def __init__(self, session: TaskSession, server: ForkServer, candidate: Candidate,
                 observers: Sequence[Observer]) -> None:
        self.session, self.candidate, self.observers = session, candidate, observers
        self.server = server  # the sandboxed fork server, this evaluation's alone while it runs
        self.settings = session.settings
        self.runner: CandidateRunner | None = None
        self.verdict = vf.Verdict()
        self.phases: dict[str, float] = {}
        self.timing: Timing | None = None
        self.stats: dict[str, KernelStats] = {}
        self.constructed: set[int] = set()
        self.builds: list[dict[str, Any]] = []
        self.observer_paths: dict[str, Observer] = {}
        self.last_reply: dict[str, Any] = {}
        self.notes: dict[str, Any] = {}  # the harness's own observations (torch.compile's)
        self.watchdog: TreeWatchdog | None = None
        self.weak: list[str] = []  # why the sandbox was weaker than designed, if it was

    def run(self) -> EvalResult:
        marks = time.monotonic()
        try:
            self._walk()
        except vf.Rejected as rej:
            self.verdict.reject(rej.level, rej.error, rej.flags)
        except RunnerFailed as exc:
            self._runner_failed(exc)
        else:
            self._collect_stats()
        finally:
            self._close()
        self.phases.setdefault("total", time.monotonic() - marks)
        return self._result()

    # -- the walk ------------------------------------------------------------------------

    def _walk(self) -> None:
        t0 = time.monotonic()
        contract = self.session.contract
        if contract.degenerate:
            self.verdict.flags.add(Flag.DEGENERATE_TASK)
        self.runner = self.server.spawn(self._spawn_request(), self.settings.call_timeout_s)
        self._enter_group()
        self.watchdog = TreeWatchdog(self.runner.channel.pids, self.settings.memory_limit_mb,
                                     cpu_s=self._cpu_s()).start()
        reply = self.runner.channel.wait(time.monotonic() + self.settings.call_timeout_s,
                                         frozenset({"ready"}), self.settings.call_timeout_s)
        self._check(reply)
        self.construct(0)  # the candidate's kernels are built by its constructor
        self.phases["build"] = time.monotonic() - t0
        t0 = time.monotonic()
        self._verify()
        self.phases["verify"] = time.monotonic() - t0
        if not self.verdict.ok or Flag.EMULATED in self.verdict.flags:
            return  # an emulated kernel gets a verdict only: its time says nothing
        t0 = time.monotonic()
        outcome = time_candidate(self, self.observers)
        self.phases["time"] = time.monotonic() - t0
        self._judge_timing(outcome)
        if self.settings.time_compile and self.timing is not None and self.verdict.ok:
            t0 = time.monotonic()
            self.timing = add_compile(self, self.timing, outcome.batch)
            self.phases["compile"] = time.monotonic() - t0

    def _spawn_request(self) -> dict[str, Any]:
        s = self.settings
        return {"source": self.candidate.source, "memory_mb": s.memory_limit_mb,
                "cpu_s": self._cpu_s(), "threads": s.worker_threads,
                "lockdown": self.session.lockdown,
                "hold": cgroups.unavailable() is None}

    def _cpu_s(self) -> int:
        return int(4 * self.settings.call_timeout_s * 8)

    def _enter_group(self) -> None:
        """Move the held runner into a fresh cgroup (memory, pids, freezer over its whole
        tree), then let it import the candidate; without cgroups it never waits."""
        if cgroups.unavailable() is not None:
            return
        channel = self.runner.channel
        try:
            channel.group = cgroups.CandidateGroup.create(
                cgroups.ROOT, self.settings.memory_limit_mb, sandbox.MAX_PROCESSES)
            channel.group.add(channel.root_pid)
        except OSError as exc:  # made before, failing now: say so, run on the weak way
            self.weak.append(f"cgroup: {exc}")
        protocol.send(channel.sock, {"op": "go"})

    def request(self, message: dict[str, Any], expect=frozenset({"done"}),
                fds: list[int] = ()) -> dict[str, Any]:
        assert self.runner is not None
        reply = self.runner.request(message, self.settings.call_timeout_s, expect, fds)
        self._check(reply)
        return reply

    def _check(self, reply: dict[str, Any]) -> None:
        if reply["type"] == "error":
            raise vf.runner_error(reply)

    def construct(self, seed: int) -> None:
        if seed in self.constructed:
            return
        self.constructed.add(seed)
        session = self.session
        session.ensure_model(seed)
        names, specs, arena = session.weights[seed]
        message = {"op": "construct", "seed": seed, "init": session.init,
                   "weight_names": names, "weights": specs}
        reply = self.request(message, fds=[arena.fd] if arena is not None else [])
        if reply.get("emulated"):
            self.verdict.flags.add(Flag.EMULATED)

    def map(self, arenas: Arenas) -> None:
        self.request(arenas.message(), fds=arenas.fds)

    # -- verification ----------------------------------------------------------------------

    def _verify(self) -> None:
        contract = self.session.contract
        seeds = list(range(self.session.seeds))
        small = min(contract.variants, key=_elements)
        for seed in seeds:
            self.construct(seed)
        for variant in contract.variants:
            rec = self.session.recording(variant, seeds, fp64=variant is small)
            check = self._verify_variant(rec)
            self.verdict.variants.append(check)
            if not check.ok:
                return

    def _verify_variant(self, rec) -> VariantCheck:
        seeds = rec.seeds
        mine = self.session.candidate_arenas(("verify", rec.variant.name, seeds[0]),
                                             rec.variant, 2 * len(seeds), rec.ref.scalars)
        for slot in range(len(seeds)):
            _fill(mine, slot, rec.inputs[slot])
            _fill(mine, slot + len(seeds), rec.inputs[slot])
        self.map(mine)
        abs_err = rel_err = 0.0
        for slot, seed in enumerate(seeds):
            try:
                errs = self._verify_seed(rec, mine, slot, seed)
            except vf.Rejected as rej:
                self.verdict.reject(rej.level, f"variant {rec.variant.name}, seed {seed}: "
                                    f"{rej.error}", rej.flags)
                return vf.failed_check(rec.variant.name, slot + 1, rej)
            abs_err, rel_err = max(abs_err, errs[0]), max(rel_err, errs[1])
        return VariantCheck(variant=rec.variant.name, seeds=len(seeds), ok=True,
                            max_abs_error=abs_err, max_rel_error=rel_err)

    def _verify_seed(self, rec, mine: Arenas, slot: int, seed: int) -> tuple[float, float]:
        n = len(rec.seeds)
        mine.outputs.poison([slot, slot + n])
        reply = self.request({"op": "run", "key": mine.key, "seed": seed,
                              "slots": [slot, slot + n]})
        contract = self.session.contract
        for s in (slot, slot + n):
            vf.judge_effects(reply, mine.inputs.views(s), rec.inputs[slot], contract)
        first, second = mine.outputs.views(slot), mine.outputs.views(slot + n)
        errs = vf.judge_pair(first, second, rec.outputs[slot], contract,
                             lambda calls: self.session.as_accurate(
                                 rec.ref, slot, calls, rec.outputs[slot], rec.variant, seed))
        if slot == 0 and rec.fp64 is not None:
            vf.judge_precision(second, rec.outputs[slot], rec.fp64)
        return errs

    def recheck(self) -> None:
        """Re-verify (a suspiciously fast candidate) on never-seen nominal inputs."""
        rec = self.session.recording(self.session.contract.nominal, [RECHECK_SEED], False)
        self.construct(RECHECK_SEED)
        check = self._verify_variant(rec)
        if not check.ok:
            self.verdict.reject(Level.CORRECT, "re-verification after a suspicious speedup: "
                                f"{check.message}")

    # -- timing verdicts ----------------------------------------------------------------

    def _judge_timing(self, outcome: TimingOutcome) -> None:
        if outcome.problem is not None:
            self.verdict.reject(Level.CORRECT, outcome.problem, outcome.flags)
            return
        self.timing = outcome.timing
        sides = self.session.timing.get("sides")
        floor = freshness.floor_seconds([*sides.ref.inputs.views(0), *sides.ref.outputs
                                         .views(0)], [], self.settings.cache_dir)
        below = freshness.capped(outcome.timing, floor)
        if below is not None:  # faster than moving its own data: the clock was fooled
            self.timing = below
            self.verdict.flags.add(Flag.IMPLAUSIBLE_TIMING)
            self.recheck()
        if self.timing.speedup > self.settings.suspicious_speedup:
            self.verdict.flags.add(Flag.SUSPICIOUS_SPEEDUP)
            self.recheck()

    def _collect_stats(self) -> None:
        """Compiler stats and the sources the runner built (untrusted: only sources)."""
        if self.runner is None:
            return
        try:
            reply = self.runner.request({"op": "stats"}, self.settings.call_timeout_s,
                                        frozenset({"status"}))
        except RunnerFailed:
            return
        self.stats = _kernel_stats(reply.get("stats"))
        builds = reply.get("builds")
        self.builds = builds if isinstance(builds, list) else []
        problem = check_builds(self.builds)
        if problem is not None:  # nothing of it reaches the trusted builder
            self.builds = []
            self.verdict.reject(Level.BUILD_FAILED, problem)

    # -- failure and cleanup ---------------------------------------------------------------

    def _runner_failed(self, exc: RunnerFailed) -> None:
        flags = {Flag.PROTOCOL_VIOLATION} if exc.kind == "violation" else set()
        text = str(exc)
        if self.watchdog is not None and self.watchdog.tripped:
            self._close()
            self.verdict.reject(Level.RUNTIME_ERROR, f"killed: {self.watchdog.tripped}")
            return
        if exc.kind == "crash" and self.runner is not None:
            channel = self.runner.channel
            statuses = self._close()
            tail = channel.log_tail()
            text = _crash_text(statuses) + (f"; its last output:\n{tail}" if tail else "")
        self.verdict.reject(Level.RUNTIME_ERROR, text, flags)

    def _close(self) -> dict[str, int]:
        statuses: dict[str, int] = {}
        if self.watchdog is not None:
            self.watchdog.stop()
        if self.runner is not None:
            try:
                statuses = self.runner.close()
            except RunnerFailed:
                self.server.close()  # a broken server: the pool starts a new one
            self.runner = None
        return statuses

    def _result(self) -> EvalResult:
        v = self.verdict
        weak = self.weak
        if self.session.bwrap is None:
            weak.append("no bubblewrap: candidate code ran without the namespace sandbox")
        if cgroups.unavailable() is not None:
            weak.append(f"{cgroups.unavailable()}: memory, process and freeze limits are "
                        "enforced per process and by polling, not by the kernel")
        if weak:
            v.flags.add(Flag.WEAK_SANDBOX)
            self.notes["weak_sandbox"] = {"reasons": weak}
        timing = self.timing if v.ok else None  # an incorrect result shows no speedup
        return EvalResult(
            task_name=self.session.task.name, candidate_id=self.candidate.id,
            backend=self.candidate.backend, level=v.level, error=v.error,
            variants=v.variants, timing=timing, flags=sorted(v.flags),
            stats=self.stats, device=_cpu_name(), phases_s=self.phases,
            observations={**self.notes,
                          **{p: o.results() for p, o in self.observer_paths.items()}},
        )


def _kernel_stats(raw: Any) -> dict[str, KernelStats]:
    """The runner's compiler stats, keeping only well-formed entries (it is untrusted)."""
    out: dict[str, KernelStats] = {}
    for name, value in (raw.items() if isinstance(raw, dict) else []):
        try:
            out[str(name)[:200]] = KernelStats.model_validate(value)
        except ValueError:
            continue
    return out


def _fill(arenas: Arenas, slot: int, values: list[Any]) -> None:
    for view, value in zip(arenas.inputs.views(slot), values, strict=True):
        if view is not None:
            view.copy_(value)


def _crash_text(statuses: dict[str, int]) -> str:
    import os
    import signal

    for status in statuses.values():
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            if sig != signal.SIGKILL:
                return f"the candidate runner crashed (killed by {signal.Signals(sig).name})"
        elif os.WIFEXITED(status):
            return f"the candidate runner crashed (exited with code {os.WEXITSTATUS(status)})"
    return "the candidate runner crashed"


def _elements(variant) -> int:
    total = 0
    for spec in variant.inputs:
        if spec is not None:
            n = 1
            for d in spec.shape:
                n *= d
            total += n
    return total


def _cpu_name() -> str:
    model = cpu_model()
    return f"cpu: {model}" if model else "cpu"
