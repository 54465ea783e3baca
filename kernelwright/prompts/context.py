"""Plain data the templates read: evaluation feedback and example kernels.

Every field always exists (``None`` or empty when unknown) so templates rendered with
``StrictUndefined`` can test them with ``{% if %}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from kernelwright.spec.result import EvalResult

LOG_TAIL_CHARS = 3000


class Feedback(BaseModel):
    """What the coder, critic and meta-prompter are told about one evaluated candidate."""

    model_config = ConfigDict(frozen=True)
    verdict: str | None = None
    error: str | None = None
    build_log: str | None = None
    variants: list[str] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list)
    timing: str | None = None
    kernel_stats: list[str] = Field(default_factory=list)
    profile: list[str] = Field(default_factory=list)

    @classmethod
    def from_result(
        cls, result: EvalResult, profile: Any = None, build_log: str | None = None
    ) -> Feedback:
        """Feedback from an ``EvalResult`` plus optional profile lines or mapping and build log."""
        verdict = "correct" if result.correct else f"not correct ({result.level.name.lower()})"
        return cls(
            verdict=verdict,
            error=_tail(result.error),
            build_log=_tail(build_log),
            variants=[_variant_line(v) for v in result.variants],
            flags=[f.value for f in result.flags],
            timing=_timing_line(result),
            kernel_stats=[_stats_line(k, s) for k, s in result.stats.items()],
            profile=profile_lines(profile),
        )


class Exemplar(BaseModel):
    """A kernel shown in a prompt (the current best, or an inspiration) with a one-line summary."""

    model_config = ConfigDict(frozen=True)
    source: str
    summary: str


def profile_lines(profile: Any) -> list[str]:
    """Lines describing a profile given as lines, a mapping, or a pydantic model."""
    if profile is None:
        return []
    if hasattr(profile, "model_dump"):
        profile = profile.model_dump(exclude_none=True)
    if isinstance(profile, Mapping):
        return [f"{k}: {v}" for k, v in profile.items() if v not in (None, "", [], {})]
    if isinstance(profile, str):
        return [profile]
    return [str(line) for line in profile]


def _tail(text: str | None) -> str | None:
    if not text:
        return None
    return text if len(text) <= LOG_TAIL_CHARS else "..." + text[-LOG_TAIL_CHARS:]


def _variant_line(v: Any) -> str:
    state = "ok" if v.ok else "FAILED"
    errs = f", max abs error {v.max_abs_error:.3g}" if v.max_abs_error is not None else ""
    msg = f": {v.message}" if v.message else ""
    return f"{v.variant}: {state} over {v.seeds} seeds{errs}{msg}"


def _timing_line(result: Any) -> str | None:
    t = result.timing
    if t is None:
        return None
    return (
        f"speedup {t.speedup:.3g}x (spread {t.speedup_low:.3g}-{t.speedup_high:.3g}), reference "
        f"{t.reference_median_s * 1e3:.4g} ms, candidate {t.candidate_median_s * 1e3:.4g} ms, "
        f"{t.repeats} repeats"
    )


def _stats_line(kernel: str, stats: Any) -> str:
    fields = stats.model_dump(exclude_none=True) if hasattr(stats, "model_dump") else dict(stats)
    return f"{kernel}: " + (", ".join(f"{k}={v}" for k, v in fields.items()) or "no statistics")
