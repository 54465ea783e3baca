"""What an evaluation returns: a correctness level, evidence, compiler stats, timings as ratios."""

from __future__ import annotations

from enum import IntEnum, StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kernelwright.spec.text import terminal_safe


class KernelStats(BaseModel):
    """Per-kernel compiler statistics (ptxas -v for CUDA; what a backend can tell otherwise)."""

    model_config = ConfigDict(frozen=True)
    registers: int | None = None
    spill_stores: int | None = None
    spill_loads: int | None = None
    shared_bytes: int | None = None
    barriers: int | None = None
    stack_bytes: int | None = None
    const_bytes: int | None = None


class Level(IntEnum):
    """KernelFoundry's correctness ladder; higher is better, only CORRECT counts."""

    SYNTAX_ERROR = 0
    BUILD_FAILED = 1
    RUNTIME_ERROR = 2
    SHAPE_MISMATCH = 3
    VALUE_MISMATCH = 4
    CORRECT = 5


def fitness(level: int, speedup: float | None) -> float:
    """KernelFoundry's score: ``F = ℓ + 𝟙[ℓ = 5] · s`` (ladder level ℓ, speedup s over eager).

    One number for MAP-Elites elites and meta-prompts alike: an incorrect candidate scores its
    ladder level (a stepping stone), a correct one 5 plus its speedup.
    """
    bonus = speedup if level == Level.CORRECT and speedup is not None else 0.0
    return float(level) + float(bonus)


class Verdict(StrEnum):
    """What a run tells its user: use the kernel, or keep the PyTorch they already have."""

    FASTER = "faster"  # the best correct kernel beats the reference
    KEEP_PYTORCH = "keep_pytorch"  # correct, but not faster than the reference
    NO_CORRECT_KERNEL = "no_correct_kernel"


def verdict_for(correct: bool, speedup: float | None) -> Verdict:
    """The verdict for a run whose best candidate is ``correct`` with ``speedup`` over eager.

    Only a speedup above 1.0 is a win; 1.0 or below (or no timing) means "keep PyTorch".
    """
    if not correct:
        return Verdict.NO_CORRECT_KERNEL
    if speedup is not None and speedup > 1.0:
        return Verdict.FASTER
    return Verdict.KEEP_PYTORCH


class Flag(StrEnum):
    """Reasons to distrust or reject a result; any REJECTING flag makes a candidate incorrect."""

    SUSPICIOUS_SPEEDUP = "suspicious_speedup"  # > settings.suspicious_speedup, re-verified
    INPUT_MUTATION = "input_mutation"
    NONDETERMINISTIC = "nondeterministic"  # candidate outputs differ between calls / poisons
    STALE_OUTPUT = "stale_output"  # candidate reused a result across inputs
    FRAMEWORK_OPERATOR = "framework_operator"  # used torch compute the contract forbids
    THREAD_INJECTION = "thread_injection"  # left threads running after a call
    TIMER_TAMPERING = "timer_tampering"  # replaced the harness's clock or sync
    PRECISION_DOWNGRADE = "precision_downgrade"  # matches fp32 ref but far worse than fp64
    WRONG_OUTPUT_TYPE = "wrong_output_type"  # tensor subclass, wrong device/layout
    DEGENERATE_TASK = "degenerate_task"  # the task's outputs do not depend on its inputs
    TIMING_MISMATCH = "timing_mismatch"  # outputs produced during timing were wrong
    EMULATED = "emulated"  # ran on the PTX emulator, not a GPU: verdict only, no timing
    PROTOCOL_VIOLATION = "protocol_violation"  # the candidate runner sent what it may not send
    WEAK_SANDBOX = "weak_sandbox"  # bubblewrap missing: candidate ran without the sandbox
    IMPLAUSIBLE_TIMING = "implausible_timing"  # faster than the machine can move its data:
    # the candidate's time is capped at that physical floor and it is re-verified


REJECTING: frozenset[Flag] = frozenset(
    {
        Flag.INPUT_MUTATION,
        Flag.NONDETERMINISTIC,
        Flag.STALE_OUTPUT,
        Flag.FRAMEWORK_OPERATOR,
        Flag.THREAD_INJECTION,
        Flag.TIMER_TAMPERING,
        Flag.PRECISION_DOWNGRADE,
        Flag.WRONG_OUTPUT_TYPE,
        Flag.TIMING_MISMATCH,
        Flag.PROTOCOL_VIOLATION,
    }
)


class VariantCheck(BaseModel):
    """Verification evidence for one shape variant, over every seed."""

    model_config = ConfigDict(frozen=True)
    variant: str
    seeds: int
    ok: bool
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    message: str | None = None

    @field_validator("variant", "message")
    @classmethod
    def _terminal_safe(cls, value: str | None) -> str | None:
        return None if value is None else terminal_safe(value)


class Timing(BaseModel):
    """Interleaved reference/candidate timing; ``speedup`` = ref median / cand median."""

    model_config = ConfigDict(frozen=True)
    reference_median_s: float
    reference_iqr_s: float
    candidate_median_s: float
    candidate_iqr_s: float
    repeats: int
    speedup: float
    speedup_low: float  # (ref q25) / (cand q75): pessimistic end of the spread
    speedup_high: float  # (ref q75) / (cand q25)
    # torch.compile timed the same way, with the same inputs and clock (None: not measured).
    compile_median_s: float | None = None
    compile_iqr_s: float | None = None
    compile_recompiles: int | None = None

    @property
    def reference_ms(self) -> float:
        return self.reference_median_s * 1e3

    @property
    def candidate_ms(self) -> float:
        return self.candidate_median_s * 1e3

    @property
    def compile_ms(self) -> float | None:
        return None if self.compile_median_s is None else self.compile_median_s * 1e3

    @property
    def speedup_vs_compile(self) -> float | None:
        """torch.compile's median over the candidate's (> 1: the candidate is faster)."""
        if not self.compile_median_s or not self.candidate_median_s:
            return None
        return self.compile_median_s / self.candidate_median_s


class EvalResult(BaseModel):
    """The verdict on one candidate for one task; a failure is data, not an exception."""

    model_config = ConfigDict(frozen=True)
    task_name: str
    candidate_id: str
    backend: str
    level: Level
    error: str | None = None
    variants: list[VariantCheck] = Field(default_factory=list)
    timing: Timing | None = None
    flags: list[Flag] = Field(default_factory=list)
    stats: dict[str, KernelStats] = Field(default_factory=dict)  # per kernel, from the builds
    device: str | None = None
    phases_s: dict[str, float] = Field(default_factory=dict)  # build / verify / time wall times
    observations: dict[str, dict] = Field(default_factory=dict)  # timing observers' results

    @field_validator("task_name", "candidate_id", "error", "device")
    @classmethod
    def _terminal_safe(cls, value: str | None) -> str | None:
        """Untrusted text (a candidate's errors and output) never controls a terminal."""
        return None if value is None else terminal_safe(value)

    @property
    def correct(self) -> bool:
        return self.level == Level.CORRECT and not (set(self.flags) & REJECTING)

    @property
    def speedup(self) -> float | None:
        return self.timing.speedup if self.timing and self.correct else None

    @property
    def max_error(self) -> dict[str, float | None]:
        return {v.variant: v.max_abs_error for v in self.variants}

    def summary(self) -> dict:
        """The JSON object ``kernelwright eval --json`` prints."""
        t = self.timing
        return {
            "task": self.task_name,
            "candidate": self.candidate_id,
            "backend": self.backend,
            "correct": self.correct,
            "level": int(self.level),
            "level_name": self.level.name.lower(),
            "error": self.error,
            "speedup": t.speedup if t else None,
            "speedup_low": t.speedup_low if t else None,
            "speedup_high": t.speedup_high if t else None,
            "verdict": verdict_for(self.correct, t.speedup if t else None).value,
            "reference_ms": t.reference_ms if t else None,
            "candidate_ms": t.candidate_ms if t else None,
            "compile_ms": t.compile_ms if t else None,
            "compile_recompiles": t.compile_recompiles if t else None,
            "max_error": self.max_error,
            "flags": [f.value for f in self.flags],
            "device": self.device,
            "phases_s": self.phases_s,
        }
