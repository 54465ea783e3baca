"""The reference itself as a candidate: "keep PyTorch" is a measured answer, not a default.

When a task allows the ``framework`` space, every run evaluates the task's own ``Model``
(unchanged, as ``ModelNew``) through the same harness as its kernels, so it has a verdict, a
median in ms and a ratio near 1.0x. It is the run's *answer* whenever no custom or vendor
kernel beats it; the best *kernel* is still reported apart from it, so fast_p and every
per-kernel figure are computed on kernels only (:func:`kernels`).

What counts: the reference's evaluation is not part of the search budget (``budget`` counts
kernel evaluations); the search never varies it, and it is never a parent.

Example:
    >>> k = Profile(candidate_id="k", correct=True, level=5, speedup=0.38, candidate_ms=2.0)
    >>> r = Profile(candidate_id="r", correct=True, level=5, speedup=1.0, candidate_ms=0.76,
    ...             origin=REFERENCE_ORIGIN, space="framework")
    >>> answer_of(k, r).candidate_id
    'r'
"""

from __future__ import annotations

from collections.abc import Iterable

from kernelwright.spec.candidate import Candidate
from kernelwright.spec.plan import Profile
from kernelwright.spec.result import Verdict, verdict_for
from kernelwright.spec.task import Task

REFERENCE_ORIGIN = "reference"
REFERENCE_SPACE = "framework"

_HEADER = (
    "# kernelwright: the task's own Model, unchanged (implementation space: framework).\n"
    "# Timed by the same harness as every kernel: the run's answer when no kernel beats it.\n"
)


def reference_candidate(task: Task) -> Candidate:
    """The candidate that is the reference: the task's source with ``ModelNew = Model``."""
    source = task.path.read_text()
    body = f"{_HEADER}{source.rstrip()}\n\n\nclass ModelNew(Model):  # noqa: F821\n    pass\n"
    return Candidate(source=body, backend="torch", origin=REFERENCE_ORIGIN)


def is_reference(profile: Profile) -> bool:
    return profile.origin == REFERENCE_ORIGIN


def kernels(profiles: Iterable[Profile]) -> list[Profile]:
    """``profiles`` without the reference's: what fast_p and per-kernel figures count."""
    return [p for p in profiles if not is_reference(p)]


def latest_reference(values: dict) -> Profile | None:
    """The reference's latest figures in a run's state ``values``: re-measured ones (a
    challenge or the final re-measurement) when there are, else its first; None if unmeasured.
    """
    first = values.get("reference")
    if first is None:
        return None
    again = [*(values.get("challenged") or []), *(values.get("confirmed") or [])]
    return next((p for p in reversed(again) if p.candidate_id == first.candidate_id), first)


def answer_of(best_kernel: Profile | None, reference: Profile | None) -> Profile | None:
    """The run's answer: the best kernel when it is faster than eager (its verdict) and its
    own median beats the reference candidate's own median; else the reference (if measured).
    """
    if reference is None or not reference.correct:
        return best_kernel
    if best_kernel is None:
        return reference
    if verdict_for(True, best_kernel.speedup) != Verdict.FASTER:
        return reference
    if best_kernel.candidate_ms and reference.candidate_ms:
        return best_kernel if best_kernel.candidate_ms < reference.candidate_ms else reference
    return best_kernel if (best_kernel.speedup or 0) > (reference.speedup or 0) else reference


def chosen_label(answer: Profile | None) -> str:
    """``kernel``, ``reference`` or ``none``: which the run's answer is."""
    if answer is None:
        return "none"
    return "reference" if is_reference(answer) else "kernel"
