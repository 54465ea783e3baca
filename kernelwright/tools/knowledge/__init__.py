"""Expert optimisation advice per operator class and backend, and its retriever."""

from kernelwright.tools.knowledge.advice import (
    BACKENDS,
    OPERATOR_CLASSES,
    Advice,
    load_advice,
    retrieve,
)

__all__ = ["BACKENDS", "OPERATOR_CLASSES", "Advice", "load_advice", "retrieve"]
