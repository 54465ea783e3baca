"""The correctness ladder (0 syntax .. 5 correct), judged in the orchestrator.

Per shape variant and seed, the candidate runner is called twice on copies of the same fresh
inputs (two calls of one batch, in separate output slots); both outputs must match the
reference's recorded outputs under the contract's tolerance and agree with each other bit for
bit (else non-deterministic or reading uninitialised memory); its input slots must come back
unchanged; it must not keep references to its outputs between calls. On the smallest
variant's first seed the outputs are also compared with a float64 reference (see
:mod:`precision`). When the contract forbids framework operators, the candidate's process
has every computing operator outside :data:`NON_COMPUTE_OPS` refused by the dispatcher
(:mod:`lockdown`); a refusal in the runner's error flags ``FRAMEWORK_OPERATOR``.

Every judgement runs here, in the trusted process, on copies the candidate cannot reach; the
runner only ever produced numbers in its output slots.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from kernelwright.spec import Contract
from kernelwright.spec.result import REJECTING, Flag, Level, VariantCheck
from kernelwright.tools.evaluate import _compare as cmp
from kernelwright.tools.evaluate.lockdown import MARKER as LOCKDOWN_MARKER
from kernelwright.tools.evaluate.precision import downgrade_message

# Operators that allocate, fill, copy, convert or re-view memory: allowed to a candidate whose
# contract forbids framework operators. Anything else computes and is flagged.
NON_COMPUTE_OPS = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "empty_permuted",
    "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "new_zeros",
    "new_ones", "new_full", "zero_", "fill_", "fill", "arange", "scalar_tensor",
    "copy_", "copy", "clone", "_to_copy", "to", "contiguous", "detach", "detach_", "alias",
    "lift_fresh", "lift_fresh_copy", "resize_", "set_", "_local_scalar_dense", "item",
    "view", "_unsafe_view", "reshape", "_reshape_alias", "view_as", "as_strided",
    "as_strided_", "t", "transpose", "permute", "expand", "expand_as", "squeeze",
    "unsqueeze", "select", "slice", "narrow", "flatten", "unflatten", "split",
    "split_with_sizes", "chunk", "unbind", "movedim", "cat", "stack", "unfold",
    "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "is_same_size",
    "resolve_conj", "resolve_neg", "_has_compatible_shallow_copy_type",
})

# Library calls a contract allowing ``vendor_library`` (and not ``framework``) admits: the
# GEMM and convolution entry points of the host BLAS / oneDNN that torch dispatches to.
VENDOR_OPS = frozenset({
    "mm", "bmm", "addmm", "baddbmm", "matmul", "convolution", "_convolution",
    "mkldnn_convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d",
    # oneDNN with fused post-ops (bias, activation), as the lowering's vendor anchors call it
    "_linear_pointwise", "_convolution_pointwise", "linear", "mkldnn_linear",
    # the CPU convolution kernels they reach through the dispatcher, and the in-place add
    # of a transposed convolution's bias (nothing addmm with an identity does not give)
    "_slow_conv2d_forward", "slow_conv3d_forward", "slow_conv_dilated2d",
    "slow_conv_dilated3d", "slow_conv_transpose2d", "slow_conv_transpose3d", "add_",
    # torch's fused CPU attention kernel, the library step of an attention anchor
    "_scaled_dot_product_flash_attention_for_cpu",
})

RUNNER_LEVELS = {"syntax": Level.SYNTAX_ERROR, "build": Level.BUILD_FAILED,
                 "runtime": Level.RUNTIME_ERROR, "shape": Level.SHAPE_MISMATCH,
                 "type": Level.SHAPE_MISMATCH}


class Rejected(Exception):
    """A candidate failed a rung of the ladder; carries the level, the reason and any flags."""

    def __init__(self, level: Level, error: str, flags: set[Flag] | None = None,
                 errors: tuple[float, float] | None = None) -> None:
        super().__init__(error)
        self.level, self.error, self.flags, self.errors = level, error, flags or set(), errors


THREAD_LIMIT_HINT = (
    "the candidate could not start another thread: its process tree reached the sandbox's "
    "limit on processes and threads. Threads or processes it starts and leaves running "
    "after a call accumulate over the timed batches (hundreds of calls); fix: join them "
    "before forward returns, or reuse one pool. The runner said:\n")


def runner_error(reply: dict) -> Rejected:
    """A runner's ``error`` message as a rejection (it can only make its own verdict worse)."""
    level = str(reply.get("level"))
    error = str(reply.get("error"))[:6000]
    if "can't start new thread" in error:
        error = THREAD_LIMIT_HINT + error
    flags = {Flag.WRONG_OUTPUT_TYPE} if level == "type" else set()
    if LOCKDOWN_MARKER in error:  # it called a framework operator the lockdown refused
        flags.add(Flag.FRAMEWORK_OPERATOR)
    return Rejected(RUNNER_LEVELS.get(level, Level.RUNTIME_ERROR), error, flags)


def lockdown_allowed(contract: Contract) -> list[str] | None:
    """The aten operators a custom-kernels-only candidate's process keeps (None: the
    contract allows the framework, nothing is locked down); see :mod:`lockdown`."""
    if contract.allows("framework"):
        return None
    allowed = set(NON_COMPUTE_OPS)
    if contract.allows("vendor_library"):
        allowed |= VENDOR_OPS
    return sorted(allowed)


@dataclass
class Verdict:
    """What verification concluded; ``ok`` means correct with no rejecting flag."""

    level: Level = Level.CORRECT
    error: str | None = None
    variants: list[VariantCheck] = field(default_factory=list)
    flags: set[Flag] = field(default_factory=set)

    @property
    def ok(self) -> bool:
        return self.level == Level.CORRECT and not (self.flags & REJECTING)

    def reject(self, level: Level, error: str, flags: set[Flag] = frozenset()) -> None:
        if self.error is None or level < self.level:
            self.level, self.error = min(self.level, level), error
        self.flags |= set(flags)


def judge_pair(first: list[torch.Tensor], second: list[torch.Tensor], ref: list[torch.Tensor],
               contract: Contract, arbiter: Callable[[list], bool] | None = None
               ) -> tuple[float, float]:
    """Two candidate calls on the same inputs against the reference: (max abs, max rel).
    ``arbiter([first, second])``, asked only on a mismatch, may overrule it (the float64
    reference: ``TaskSession.as_accurate``)."""
    same = cmp.identical(first, second)
    ok1, abs1, rel1, msg1 = cmp.errors(first, ref, contract)
    # identical outputs have identical errors: the second comparison is only for a mismatch
    ok2, abs2, rel2, msg2 = (ok1, abs1, rel1, msg1) if same else cmp.errors(second, ref,
                                                                            contract)
    if not (ok1 and ok2) and not (arbiter is not None and arbiter([first, second])):
        flags = set() if same else {Flag.NONDETERMINISTIC}
        why = "" if same else (" (two calls on the same inputs disagree: uninitialised "
                               "memory or non-determinism)")
        raise Rejected(Level.VALUE_MISMATCH, (msg1 or msg2) + why, flags,
                       (_worst(abs1, abs2), _worst(rel1, rel2)))
    if not same:
        raise Rejected(Level.CORRECT, "two calls on the same inputs gave different results "
                       "(uninitialised memory or non-determinism)", {Flag.NONDETERMINISTIC})
    return max(abs1, abs2), max(rel1, rel2)


def judge_effects(reply: dict, given: list, pristine: list, contract: Contract) -> None:
    """Side effects a batch may not have: changed inputs, kept outputs, framework ops."""
    changed = cmp.changed_inputs(given, pristine)
    if changed and contract.preserve_inputs:
        raise Rejected(Level.CORRECT, f"modified its input(s) {changed}; inputs must be left "
                       "unchanged (write results to new tensors)", {Flag.INPUT_MUTATION})
    if int(reply.get("retained", 0)):
        raise Rejected(Level.CORRECT, "kept references to its output tensors between calls "
                       "(a persistent or rotating output buffer); allocate outputs per call",
                       {Flag.STALE_OUTPUT})
    compute = {str(op) for op in reply.get("ops", [])} - NON_COMPUTE_OPS
    if contract.allows("vendor_library"):
        compute -= VENDOR_OPS
    if not contract.allows("framework") and compute:
        raise Rejected(Level.CORRECT, "used framework operators the contract forbids: "
                       f"{', '.join(sorted(compute))}; compute them in your own kernels",
                       {Flag.FRAMEWORK_OPERATOR})


def judge_precision(cand: list[torch.Tensor], ref: list[torch.Tensor],
                    ref64: list[torch.Tensor] | None) -> None:
    message = downgrade_message(cand, ref, ref64) if ref64 is not None else None
    if message:
        raise Rejected(Level.CORRECT, message, {Flag.PRECISION_DOWNGRADE})


def failed_check(variant: str, seeds: int, rej: Rejected) -> VariantCheck:
    abs_err, rel_err = rej.errors or (None, None)
    return VariantCheck(variant=variant, seeds=seeds, ok=False, max_abs_error=abs_err or None,
                        max_rel_error=rel_err or None, message=rej.error)


def _worst(a: float, b: float) -> float:
    return b if b != b or b > a else a  # NaN (a poisoned output) is the worst
