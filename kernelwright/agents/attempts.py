"""The run's attempt history as the LLM sees it: every evaluated candidate, ranked and bounded.

Built from the run's profiles (kept by the checkpoints) and the candidates in the run store, so
it lasts across rounds and resumes. Each attempt holds the diff against its parent, the verdict,
the key compiler or mismatch line (deduplicated, with no frames from kernelwright's own files),
the speedup with its spread and the roofline position. The coder and the critic see a bounded
window: failures of the latest rounds first (their errors must reach the next prompt), then the
fastest correct attempts.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from kernelwright.agents.prompting import SourceLookup, feedback_from_profile, lookup_source
from kernelwright.agents.variants import view_of
from kernelwright.prompts import evolve_regions
from kernelwright.prompts.context import Feedback
from kernelwright.spec.plan import History, Profile

DIFF_LINES = 14  # changed lines shown per attempt
_ERROR_MARK = re.compile(r"\berror\b|mismatch|differs|exception|not correct", re.I)
_OWN_FRAME = re.compile(r'File "[^"]*kernelwright[^"]*"|/kernelwright/|site-packages/')


@dataclass(frozen=True)
class Attempt:
    """One evaluated candidate, in the words the prompts use."""

    candidate_id: str
    parent: str | None
    verdict: str
    key_line: str | None
    speed: str | None
    roofline: str | None
    diff: str | None
    origin: str

    def line(self) -> str:
        """The attempt in one line (no diff)."""
        parts = [f"{self.candidate_id} ({self.origin}): {self.verdict}"]
        parts += [p for p in (self.speed, self.roofline) if p]
        if self.key_line:
            parts.append(f"error: {self.key_line}")
        return "; ".join(parts)


def key_error_line(error: str | None) -> str | None:
    """The line of an error log that says what went wrong, without kernelwright's own frames.

    Compiler logs: the first ``error:`` line, its path prefix removed. Mismatches and
    exceptions: the first line naming one. Else the log's last non-frame line.
    """
    if not error:
        return None
    lines = [ln.strip() for ln in error.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not _OWN_FRAME.search(ln) and not ln.startswith("Traceback")]
    for ln in lines:
        if "error:" in ln:
            return ln.split("error:", 1)[1].strip()[:200]
    for ln in lines:
        if _ERROR_MARK.search(ln):
            return ln[:200]
    return lines[-1][:200] if lines else None


def editable(source: str) -> str:
    """The part of a module the coder may change: its evolve blocks, else the whole module."""
    try:
        spans = evolve_regions(source)
    except ValueError:
        return source
    return "\n".join(source[a:b] for a, b in spans) if spans else source


def shown_block(source: str) -> str:
    """What the coder sees of a module: a lowered module's nominal kernels with its launch
    configuration (``variants.view_of``), else its evolve blocks, else the whole module."""
    view = view_of(source)
    return view.text if view is not None else editable(source)


def short_diff(old: str, new: str, limit: int = DIFF_LINES) -> str:
    """The changed lines of ``new`` against ``old`` (as the coder sees them), at most ``limit``."""
    lines = difflib.unified_diff(
        shown_block(old).splitlines(), shown_block(new).splitlines(), lineterm="", n=0
    )
    changed = [ln for ln in lines if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    if len(changed) > limit:
        return "\n".join(changed[:limit] + [f"... ({len(changed) - limit} more changed lines)"])
    return "\n".join(changed)


def verdict_of(profile: Profile) -> str:
    if profile.correct:
        return "correct"
    return {1: "does not build", 2: "fails to run", 3: "wrong shape or dtype",
            4: "wrong values"}.get(profile.level, f"not correct (level {profile.level} of 5)")


def attempt_of(profile: Profile, lookup: SourceLookup | None) -> Attempt:
    cand = lookup_source(lookup, profile.candidate_id)
    parent = lookup_source(lookup, cand.parent) if cand is not None and cand.parent else None
    diff = short_diff(parent.source, cand.source) if cand is not None and parent else None
    speed = None
    if profile.speedup is not None:
        lo, hi = profile.speedup_low or profile.speedup, profile.speedup_high or profile.speedup
        speed = f"{profile.speedup:.3g}x (spread {lo:.3g}-{hi:.3g})"
    roof = profile.roofline
    fraction = getattr(roof, "fraction", None) if roof is not None else None
    return Attempt(
        candidate_id=profile.candidate_id,
        parent=cand.parent if cand is not None else None,
        verdict=verdict_of(profile),
        key_line=None if profile.correct else key_error_line(profile.error),
        speed=speed,
        roofline=f"{fraction:.0%} of the roofline bound" if fraction is not None else None,
        diff=diff or None,
        origin=profile.origin or "?",
    )


def attempt_window(history: History, lookup: SourceLookup | None, size: int = 6) -> list[Attempt]:
    """Up to ``size`` attempts: the latest failures (newest first, one per distinct error),
    then the fastest correct ones. Never the same candidate twice."""
    failures: list[Profile] = []
    seen_errors: set[str] = set()
    for p in reversed(history.profiles):
        if p.correct:
            continue
        key = key_error_line(p.error) or p.candidate_id
        if key not in seen_errors:
            seen_errors.add(key)
            failures.append(p)
    correct = sorted((p for p in history.profiles if p.correct), key=lambda p: -(p.speedup or 0))
    chosen = (failures[: max(size // 2, 1)] + correct)[:size]
    if len(chosen) < size:
        chosen += [p for p in failures if p not in chosen][: size - len(chosen)]
    return [attempt_of(p, lookup) for p in chosen]


def parent_feedback(profile: Profile) -> Feedback:
    """The results of the kernel to edit, its error cut to the key line (no log twice)."""
    feedback = feedback_from_profile(profile)
    return feedback.model_copy(update={"error": key_error_line(profile.error)})
