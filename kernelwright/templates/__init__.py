"""Parameterised kernel templates for the offline coder and the tuner.

Example:
    >>> from kernelwright.templates import templates_for, ElementwiseSpec
    >>> t = templates_for("elementwise", "sycl")[0]
    >>> source = t.render(t.default_params(), ElementwiseSpec(ops=["gelu_tanh"]))
"""

from kernelwright.templates.base import Param, Template
from kernelwright.templates.opspec import (
    OP_SPECS,
    ElementwiseSpec,
    GemmSpec,
    LayoutSpec,
    OperatorClass,
    OpSpec,
    ReductionSpec,
    RowwiseNormSpec,
)
from kernelwright.templates.registry import TEMPLATES, get_template, templates_for

__all__ = [
    "OP_SPECS",
    "TEMPLATES",
    "ElementwiseSpec",
    "GemmSpec",
    "LayoutSpec",
    "OpSpec",
    "OperatorClass",
    "Param",
    "ReductionSpec",
    "RowwiseNormSpec",
    "Template",
    "get_template",
    "templates_for",
]
