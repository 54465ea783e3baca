"""The coarse shapes of work the planner and the knowledge base distinguish."""

from __future__ import annotations

from enum import StrEnum


class OperatorClass(StrEnum):
    """The coarse shapes of work the planner distinguishes."""

    ELEMENTWISE = "elementwise"
    ROWWISE_NORM = "rowwise_norm"
    REDUCTION = "reduction"
    LAYOUT = "layout"
    GEMM = "gemm"
    OTHER = "other"
