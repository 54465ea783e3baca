"""Evaluation harness: sandboxed verification (correctness ladder) and interleaved timing."""

from kernelwright.tools.evaluate.api import evaluate
from kernelwright.tools.evaluate.observers import NullObserver, Observer
from kernelwright.tools.evaluate.pool import WorkerPool
from kernelwright.tools.evaluate.result import (
    REJECTING,
    EvalResult,
    Flag,
    Level,
    Timing,
    VariantCheck,
)

__all__ = [
    "REJECTING",
    "EvalResult",
    "Flag",
    "Level",
    "NullObserver",
    "Observer",
    "Timing",
    "VariantCheck",
    "WorkerPool",
    "evaluate",
]
