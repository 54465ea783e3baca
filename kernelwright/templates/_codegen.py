"""Small code generators the Jinja templates call: elementwise op chains as C++ statements."""

from __future__ import annotations

from collections.abc import Sequence

TWO_SQRT_2_OVER_PI = "-1.5957691216057308f"  # -2 * sqrt(2 / pi)
INV_SQRT_2 = "0.7071067811865476f"


def _op(op: str, m: str, v: str, col: str, idx: str, vec: str | None) -> str:
    relu = (f"{v} = sycl::select({vec}(0.0f), {v}, {v} > 0.0f);" if vec
            else f"{v} = {v} > 0.0f ? {v} : 0.0f;")
    table = {
        # 0.5 * (1 + tanh(u)) == 1 / (1 + exp(-2u)): one exp instead of a tanh
        "gelu_tanh": f"{v} = {v} / (1.0f + {m}exp({TWO_SQRT_2_OVER_PI} * "
                     f"({v} + 0.044715f * {v} * {v} * {v})));",
        "gelu_erf": f"{v} = 0.5f * {v} * (1.0f + {m}erf({v} * {INV_SQRT_2}));",
        "silu": f"{v} = {v} / (1.0f + {m}exp(-{v}));",
        "relu": relu,
        "sigmoid": f"{v} = 1.0f / (1.0f + {m}exp(-{v}));",
        "tanh": f"{v} = {m}tanh({v});",
        "scale": f"{v} = {v} * scale;",
        "bias": f"{v} = {v} + " + (f"{col};" if vec else f"bias[{col}];"),
        "add": f"{v} = {v} + x2[{idx}];",
    }
    return table[op]


def apply_ops(ops: Sequence[str], math: str, var: str = "v", col: str = "col",
              idx: str = "i", vec: str | None = None) -> str:
    """C++ statements applying ``ops`` in order to the float ``var``.

    Args:
        ops: Op names (see ``ElementwiseOp``).
        math: Namespace prefix of the math functions: ``"sycl::"`` or ``"std::"``.
        var: The variable holding the value.
        col: Expression of the column (for ``bias``); idx: of the flat index (for ``add``).
        vec: The ``sycl::vec`` type of ``var`` when it is a vector (SYCL only); then ``col``
            names a vector of the same type holding the bias of each lane.
    """
    return " ".join(_op(op, math, var, col, idx, vec) for op in ops)


def py_float(expr: str) -> str:
    """Wrap a Python expression so the generated code passes a float kernel argument."""
    return f"float({expr})"


def pow2_ceil(n: int) -> int:
    """The smallest power of two >= ``n``."""
    p = 1
    while p < n:
        p *= 2
    return p
