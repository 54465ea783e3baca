"""Evaluation harness: a trusted orchestrator judges candidates that run alone in a sandbox."""

from kernelwright.spec.result import (
    REJECTING,
    EvalResult,
    Flag,
    Level,
    Timing,
    VariantCheck,
)
from kernelwright.tools.evaluate import clocks  # noqa: F401  (saved before anything else loads)
from kernelwright.tools.evaluate.api import derive_contract_limited, evaluate
from kernelwright.tools.evaluate.observers import NullObserver, Observer
from kernelwright.tools.evaluate.pool import WorkerPool

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
    "derive_contract_limited",
    "evaluate",
]
