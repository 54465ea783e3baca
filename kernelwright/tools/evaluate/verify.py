"""The correctness ladder (0 syntax .. 5 correct) and the verification defences.

Per shape variant and seed: fresh inputs; identical weights; candidate (NaN poison) ->
reference -> candidate (large-value poison) on copies of the same inputs; both candidate
outputs must match the reference under the contract's tolerance; inputs must come back
unchanged; outputs must be plain dense CPU tensors in fresh storage; no new Python threads may
stay alive. On the smallest variant the result is also compared against a float64 reference
(see :mod:`precision`). With a recording (see :mod:`replay`) the inputs, the reference's
outputs and the float64 reference come from it instead of live draws and runs. When the
contract forbids framework operators, the aten operators the candidate ran are checked
against an allowlist (see :mod:`poison`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import torch

from kernelwright.spec import Contract, ShapeVariant, variant_inputs
from kernelwright.spec.inputs import as_tensor_list
from kernelwright.spec.result import REJECTING, Flag, Level, VariantCheck
from kernelwright.tools.evaluate import _compare as cmp
from kernelwright.tools.evaluate._loader import Rejected, build_model, error_text, share_weights
from kernelwright.tools.evaluate.guards import ThreadGuard
from kernelwright.tools.evaluate.poison import PoisonKind, PoisonMode
from kernelwright.tools.evaluate.precision import downgrade_message, reference_fp64
from kernelwright.tools.evaluate.replay import Entry, Replay, smallest


@dataclass
class Verdict:
    """What verification concluded; ``ok`` means correct with no rejecting flag."""

    level: Level = Level.CORRECT
    error: str | None = None
    variants: list[VariantCheck] = field(default_factory=list)
    flags: set[Flag] = field(default_factory=set)
    ops: set[str] = field(default_factory=set)

    @property
    def ok(self) -> bool:
        return self.level == Level.CORRECT and not (self.flags & REJECTING)

    def reject(self, level: Level, error: str, flags: set[Flag] = frozenset()) -> None:
        if self.error is None or level < self.level:
            self.level, self.error = min(self.level, level), error
        self.flags |= set(flags)


@dataclass
class Models:
    """The reference and candidate models built under one seed."""

    reference: torch.nn.Module
    candidate: Any


@dataclass
class Verifier:
    """Runs the ladder for one candidate class against one task.

    Example:
        >>> verdict = Verifier(task_module, contract, seeds=3, sync=lambda: None,
        ...                    threads=ThreadGuard()).run(module.ModelNew)  # doctest: +SKIP
    """

    task: ModuleType
    contract: Contract
    seeds: int
    sync: Callable[[], None]
    threads: ThreadGuard
    replay: Replay | None = None
    _models: dict[int, Models] = field(default_factory=dict)

    def models(self, cls: type, seed: int) -> Models:
        """Reference and candidate under ``seed`` (cached); the candidate gets the weights."""
        if seed not in self._models:
            ref = build_model(self.task.Model, self.task, seed, "the reference Model")
            cand = build_model(cls, self.task, seed, "ModelNew")
            share_weights(ref, cand)
            self._models[seed] = Models(ref, cand)
        return self._models[seed]

    def run(self, cls: type) -> Verdict:
        """Verify ``cls`` on every variant x seed; stop at the first rejection."""
        verdict = Verdict()
        if self.contract.degenerate:
            verdict.flags.add(Flag.DEGENERATE_TASK)
        small = smallest(self.contract)
        for variant in self.contract.variants:
            check = self._variant(cls, variant, verdict, precision=variant is small)
            verdict.variants.append(check)
            if not check.ok:
                break
        return verdict

    def _variant(self, cls: type, variant: ShapeVariant, verdict: Verdict, precision: bool):
        abs_err = rel_err = 0.0
        for seed in range(self.seeds):
            try:
                errs = self.check(cls, variant, seed, verdict, precision and seed == 0)
            except Rejected as rej:
                verdict.reject(rej.level, f"variant {variant.name}, seed {seed}: {rej.error}",
                               rej.flags)
                if rej.errors:
                    abs_err = _worst(abs_err, rej.errors[0])
                    rel_err = _worst(rel_err, rej.errors[1])
                return VariantCheck(variant=variant.name, seeds=seed + 1, ok=False,
                                    max_abs_error=errs_or(abs_err), max_rel_error=errs_or(rel_err),
                                    message=rej.error)
            abs_err, rel_err = max(abs_err, errs[0]), max(rel_err, errs[1])
        return VariantCheck(variant=variant.name, seeds=self.seeds, ok=True,
                            max_abs_error=abs_err, max_rel_error=rel_err)

    def check(self, cls: type, variant: ShapeVariant, seed: int, verdict: Verdict,
              precision: bool) -> tuple[float, float]:
        """One (variant, seed): C -> R -> C; returns (max abs, max rel) error or raises.

        With a recording, R is the recorded reference output and ``inputs`` the recorded
        pristine set: every call gets a clone, so no candidate can write into the recording.
        """
        models = self.models(cls, seed)
        entry = self.replay.get(variant.name, seed) if self.replay is not None else None
        inputs = entry.inputs if entry is not None else variant_inputs(self.task, variant, seed)
        first, first_args = self.call_candidate(models.candidate, inputs, "nan", verdict)
        snapshot = [o.clone() for o in first]
        ref = entry.outputs if entry is not None else self.call_reference(models.reference,
                                                                           inputs)
        second, _ = self.call_candidate(models.candidate, inputs, "big", verdict)
        if cmp.storages(first) & cmp.storages(second):
            raise Rejected(Level.VALUE_MISMATCH, "returned the same output buffer on two calls "
                           "(a cached or reused result); allocate outputs per call",
                           {Flag.STALE_OUTPUT})
        del first, first_args
        return self._judge(snapshot, second, ref, models, inputs, precision, entry)

    def _judge(self, first, second, ref, models, inputs, precision, entry: Entry | None):
        cmp.check_shapes(first, ref)
        cmp.check_shapes(second, ref)
        ok1, abs1, rel1, msg1 = cmp.errors(first, ref, self.contract)
        ok2, abs2, rel2, msg2 = cmp.errors(second, ref, self.contract)
        same = cmp.identical(first, second)
        if not (ok1 and ok2):
            flags = set() if same else {Flag.STALE_OUTPUT if ok2 else Flag.NONDETERMINISTIC}
            why = {Flag.STALE_OUTPUT: " (wrong before the reference ran, right after it: "
                   "reused a result)", Flag.NONDETERMINISTIC: " (the two calls disagree: "
                   "uninitialised memory or non-determinism)"}
            raise Rejected(Level.VALUE_MISMATCH, (msg1 or msg2) + "".join(why[f] for f in flags),
                           flags, (_worst(abs1, abs2), _worst(rel1, rel2)))
        if not same:
            raise Rejected(Level.CORRECT, "two calls with different output poisons gave "
                           "different results (uninitialised memory or non-determinism)",
                           {Flag.NONDETERMINISTIC})
        if precision:
            ref64 = entry.fp64 if entry is not None else reference_fp64(models.reference, inputs)
            self._precision(ref, second, ref64)
        return max(abs1, abs2), max(rel1, rel2)

    def _precision(self, ref, cand, ref64) -> None:
        message = downgrade_message(cand, ref, ref64) if ref64 is not None else None
        if message:
            raise Rejected(Level.CORRECT, message, {Flag.PRECISION_DOWNGRADE})

    def call_candidate(self, model: Any, inputs: list[Any], kind: PoisonKind, verdict: Verdict):
        """Run the candidate on a copy of ``inputs`` under poison ``kind``; check its effects."""
        args = cmp.clone_inputs(inputs)
        try:
            with torch.no_grad(), PoisonMode(kind) as mode:
                value = model(*args)
            self.sync()
        except (Exception, SystemExit) as exc:  # sys.exit() must not end the worker
            raise Rejected(Level.RUNTIME_ERROR, error_text(exc, "ModelNew.forward")) from exc
        verdict.ops |= mode.ops
        self._effects(args, inputs, mode)
        return cmp.as_outputs(value), args

    def _effects(self, args: list[Any], pristine: list[Any], mode: PoisonMode) -> None:
        threads = self.threads.injected()
        if threads:
            raise Rejected(Level.CORRECT, f"left Python threads running after forward: "
                           f"{', '.join(threads)}; finish all work before returning",
                           {Flag.THREAD_INJECTION})
        changed = cmp.changed_inputs(args, pristine)
        if changed and self.contract.preserve_inputs:
            raise Rejected(Level.CORRECT, f"modified its input(s) {changed}; inputs must be "
                           "left unchanged (write results to new tensors)", {Flag.INPUT_MUTATION})
        if not self.contract.allows("framework") and mode.compute_ops:
            raise Rejected(Level.CORRECT, "used framework operators the contract forbids: "
                           f"{', '.join(sorted(mode.compute_ops))}; compute them in your own "
                           "kernels", {Flag.FRAMEWORK_OPERATOR})

    def call_reference(self, model: torch.nn.Module, inputs: list[Any]) -> list[torch.Tensor]:
        with torch.no_grad():
            return as_tensor_list(model(*cmp.clone_inputs(inputs)), "reference Model")


def errs_or(value: float) -> float | None:
    return value if value else None


def _worst(a: float, b: float) -> float:
    return b if b != b or b > a else a  # NaN (a poisoned output) is the worst

