"""Op specs: small descriptions of WHAT a template must compute for one task.

The planner maps a task's operator graph to ``(template, op spec)``; the op spec names the
forward inputs, how ``ModelNew`` creates its parameters (so that they match the reference's
``state_dict``), and the operator's options (epilogue, eps, affine part, scale). Expressions such
as ``"self.weight"`` or ``"self.scale"`` are Python evaluated inside ``ModelNew.forward``.

Example:
    >>> spec = RowwiseNormSpec(kind="rmsnorm", init_args="features: int, eps: float = 1e-6",
    ...     init_body=["self.eps = eps", "self.weight = nn.Parameter(torch.ones(features))"],
    ...     eps="self.eps", weight="self.weight")
    >>> spec.operator_class
    'rowwise_norm'
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

OperatorClass = Literal["elementwise", "rowwise_norm", "reduction", "layout", "gemm"]
ElementwiseOp = Literal["gelu_tanh", "gelu_erf", "silu", "relu", "sigmoid", "tanh", "bias",
                        "scale", "add"]
EpilogueOp = Literal["scale", "bias", "gelu_tanh", "gelu_erf", "silu", "relu", "sigmoid", "tanh"]


class OpSpec(BaseModel):
    """What every op spec holds: the shape of ``ModelNew`` seen from outside.

    Attributes:
        init_args: Constructor parameters after ``self``, as in the reference
            (``"features: int, eps: float = 1e-5"``).
        init_body: Statements run in ``__init__`` after ``super().__init__()``, creating the
            same parameters (names, shapes, init order) as the reference.
        inputs: Names of the forward arguments, in order.
        imports: Extra import lines the init body needs (``"import math"``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    init_args: str = ""
    init_body: list[str] = Field(default_factory=list)
    inputs: list[str] = Field(default_factory=lambda: ["x"])
    imports: list[str] = Field(default_factory=list)

    @property
    def operator_class(self) -> str:
        raise NotImplementedError

    def _need_input(self, name: str | None, what: str) -> None:
        if name is not None and name not in self.inputs:
            raise ValueError(f"{what} {name!r} is not a forward input; inputs are {self.inputs}")


class ElementwiseSpec(OpSpec):
    """A chain of elementwise ops applied in order to ``inputs[0]``.

    ``bias`` is an expression for a 1-D tensor added along the last dimension; ``addend`` names
    a second forward input of the same shape (for ``add``); ``scale`` an expression (float).
    """

    ops: list[ElementwiseOp] = Field(min_length=1)
    scale: str = "1.0"
    bias: str | None = None
    addend: str | None = None

    @property
    def operator_class(self) -> str:
        return "elementwise"

    @model_validator(mode="after")
    def _check(self) -> ElementwiseSpec:
        if "bias" in self.ops and self.bias is None:
            raise ValueError("ops contain 'bias': set bias='self.bias' (an expression)")
        if "add" in self.ops and self.addend is None:
            raise ValueError("ops contain 'add': set addend to the name of the second input")
        self._need_input(self.addend, "addend")
        return self


class RowwiseNormSpec(OpSpec):
    """Softmax, LayerNorm or RMSNorm over the last dimension.

    ``residual`` names an input added to ``inputs[0]`` first; ``scale`` multiplies the input of a
    softmax; ``weight``/``bias`` are expressions for the affine part (``None``: no affine part).
    """

    kind: Literal["softmax", "layernorm", "rmsnorm"]
    eps: str = "1e-5"
    weight: str | None = None
    bias: str | None = None
    residual: str | None = None
    scale: str = "1.0"

    @property
    def operator_class(self) -> str:
        return "rowwise_norm"

    @model_validator(mode="after")
    def _check(self) -> RowwiseNormSpec:
        self._need_input(self.residual, "residual")
        if self.kind == "softmax" and (self.weight or self.bias):
            raise ValueError("a softmax has no affine part: leave weight and bias unset")
        if self.kind == "rmsnorm" and self.bias:
            raise ValueError("RMSNorm has no bias: leave bias unset")
        return self


class ReductionSpec(OpSpec):
    """A reduction of the last dimension (the output drops it unless ``keepdim``)."""

    op: Literal["sum", "mean", "max"] = "sum"
    keepdim: bool = False

    @property
    def operator_class(self) -> str:
        return "reduction"


class LayoutSpec(OpSpec):
    """A materialised transpose of the last two dimensions (leading dimensions are batches)."""

    op: Literal["transpose"] = "transpose"

    @property
    def operator_class(self) -> str:
        return "layout"


class GemmSpec(OpSpec):
    """``C = epilogue(A @ B)``, optionally followed by a row softmax of C.

    Attributes:
        a: Forward input holding A, shape ``(..., M, K)``.
        b: Expression for B: ``(K, N)`` when ``b_layout="kn"``, ``(N, K)`` when ``"nk"``
            (``x @ W.t()`` and ``q @ k.transpose(-1, -2)``); batched B has a leading batch dim.
        batched: A and B carry one leading batch dimension each (else A's leading dims are rows).
        epilogue: Elementwise ops applied to each output, in order.
        softmax: Apply a row softmax to C (a second kernel).
    """

    a: str = "x"
    b: str = "self.weight"
    b_layout: Literal["kn", "nk"] = "kn"
    batched: bool = False
    epilogue: list[EpilogueOp] = Field(default_factory=list)
    scale: str = "1.0"
    bias: str | None = None
    softmax: bool = False

    @property
    def operator_class(self) -> str:
        return "gemm"

    @model_validator(mode="after")
    def _check(self) -> GemmSpec:
        self._need_input(self.a, "a")
        if "bias" in self.epilogue and self.bias is None:
            raise ValueError("epilogue contains 'bias': set bias='self.bias' (an expression)")
        return self


OP_SPECS: dict[str, type[OpSpec]] = {
    "elementwise": ElementwiseSpec,
    "rowwise_norm": RowwiseNormSpec,
    "reduction": ReductionSpec,
    "layout": LayoutSpec,
    "gemm": GemmSpec,
}
